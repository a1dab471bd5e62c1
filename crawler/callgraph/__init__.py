"""crawler.callgraph: TODO docstring."""
