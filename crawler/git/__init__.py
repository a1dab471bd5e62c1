"""Sources, fetching and pinning: a repository at a commit, read only from git's object store.

This package owns everything that touches git: what the user asked to crawl, checked before
git runs (`source`), the cache of fetched commits (`fetch`), pinning a ref to a full sha and
listing and reading the `.py` blobs there (`pin`), where the caches live when the user names
no folder (`cache_folder`: a command that reads only the cache database imports no git), the
first commit that tells local repositories apart (`root`), a repository's tags for a history
walk (`tags`), git's line map between two commits (`diff`), and permalinks pinned to a commit
(`permalink`). Every call to
git goes through one hardened door (`_cmd`): GitPython's `Repo` and `Git`, with its
unsafe-option guards on, our `-c` options on every call and a scrubbed environment. A local
repository's work tree, index and uncommitted changes are never read.

The contract, in one example: anything git could read as an option or a helper program is
refused in one line that names the place first, before git runs; what is accepted becomes
one identity, and a record's link is pinned to the full sha.

>>> from crawler.git.permalink import permalink
>>> from crawler.git.source import check_ref, parse_source
>>> from crawler.records import Pin
>>> check_ref("--upload-pack=touch x", "lib")  # doctest: +ELLIPSIS
Traceback (most recent call last):
crawler.errors.RefError: [lib] refused commit '--upload-pack=touch x': it begins with '-', ...
>>> parse_source("ext::sh -c touch% x")  # doctest: +ELLIPSIS
Traceback (most recent call last):
crawler.errors.SourceError: [ext::sh -c touch% x] refused: '<transport>::' addresses run helper ...
>>> spec = parse_source("github:acme/lib")
>>> spec.location, spec.host, spec.owner, spec.name
('https://github.com/acme/lib.git', 'github.com', 'acme', 'lib')
>>> pin = Pin("github:acme/lib", "github.com", "acme", "lib", "v1.2", "0123456789" * 4,
...           web_url="https://github.com/acme/lib")
>>> permalink(pin, "pkg/mod.py", 3, 4)
'https://github.com/acme/lib/blob/0123456789012345678901234567890123456789/pkg/mod.py#L3-L4'
>>> print(permalink(pin, "pkg/../mod.py", 3, 3))  # no encoding of `..` names its own file
None

May import: `crawler.records`, `crawler.errors`.
Line budget: 2,100 lines.
"""
