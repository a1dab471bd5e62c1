import sys

try:
    from crawler.cli.entry import main
except KeyboardInterrupt:  # Ctrl-C while the command line loads: its line and code, as `main`'s
    sys.stderr.write("Error: interrupted\n")
    raise SystemExit(130) from None

main()  # the installed command's entry: a Ctrl-C anywhere in the command is said the same way
