"""crawler.cli.commands: TODO docstring."""
