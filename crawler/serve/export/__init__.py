"""crawler.serve.export.writers: TODO docstring."""
