"""crawler.serve.review.checks: TODO docstring."""
