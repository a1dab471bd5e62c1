"""What tests share: real git repositories, output folders, child processes, kill scenes, the
runtime harness of the message cases, a datasette server; no test lives here."""
