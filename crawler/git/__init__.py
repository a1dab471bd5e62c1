"""Sources, fetching and pinning: a repository at a commit, read only from git's object store.

Owns what the user asked to crawl (`source`), the cache of fetched commits (`fetch`), pinning a
ref to a full sha and listing and reading the `.py` blobs there (`pin`), the first commit that
tells local repositories apart (`root`), and permalinks pinned to a commit (`permalink`). Every
call to git goes through one hardened door (`_cmd`): GitPython's `Repo` and `Git`, with its
unsafe-option guards on, our `-c` options on every call and a scrubbed environment.

May import: `crawler.records`, `crawler.errors`.
"""
