"""crawler.serve.lookup.sources: TODO docstring."""
