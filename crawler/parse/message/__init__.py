"""crawler.parse.message: TODO docstring."""
