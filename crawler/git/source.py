"""What the user asked to crawl: the source, the ref and the name, checked before git runs.

Every value here may reach git's argv or config, so anything that git could read as an
option, a helper transport or a command is refused with a SourceError or RefError first. What
exists here as a path is read here; GitHub is reached for `github:OWNER/NAME`, and for a bare
OWNER/NAME only when it does not look like a mistyped path (then with a note).
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import SplitResult, quote, unquote, urlsplit

from crawler.errors import MissingSourceError, RefError, SourceError
from crawler.git._cmd import HEX_SHA, GitFailed, run_git
from crawler.git.permalink import GITLAB, forge_of

LOCAL = "local"  # host and owner of a repository with no network remote
NO_OWNER = "_"  # owner of a URL with a single path component: git://host/repo
GITHUB = "github.com"

_SCHEMES = {"https": "https", "http": "http", "ssh": "ssh", "git+ssh": "ssh",
            "ssh+git": "ssh", "git": "git", "file": "file"}
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")  # ext::, fd::, any <transport>::
_SCP = re.compile(r"^(?:(?P<user>[^@/:]+)@)?(?P<host>[^@/:]+):(?P<path>.+)$")
_SHORTHAND = re.compile(r"^(?P<owner>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.-]+)$")
_GITHUB_PREFIX = re.compile(r"^(?:gh|github):(?P<rest>.*)$", re.IGNORECASE)
_GITHUB_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")  # GitHub's user and org names
_DOT_VERSION = re.compile(r"\d\.\d")  # clik-8.1.7: a release folder, not a repository name
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]")
# Options that make git run or write something, refused anywhere inside a value.
_SMUGGLED = ("--upload-pack", "--receive-pack", "--exec", "--config", "--output",
             "--template", "--git-dir", "--work-tree")
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source: where git reads it, and the identity its output folder is named by."""

    kind: str  # "local" | "remote"
    location: str  # absolute path (local) or URL (remote), as git is given it
    host: str  # sanitised: [A-Za-z0-9._-]
    owner: str  # sanitised per component; may hold "/" for nested groups
    name: str
    web_url: str | None
    git_dir: str | None = None  # local only: the repository's git directory, found once
    by_root: bool = False  # no network origin and no --name: `pin` takes the owner from the
    # pinned history's root commit, so two folders of the same name are two identities
    note: str | None = None  # how the source was read, when the user did not say (OWNER/NAME)
    forge: str | None = None  # the permalink shape of web_url: permalink.FORGES, None: no links

    @property
    def file_url(self) -> bool:
        """A `file://` source: fetched like a remote, but its repository is on this machine."""
        return self.kind == "remote" and self.location[:5].lower() == "file:"

    @property
    def display(self) -> str:
        """How messages name the source: the location with any password left out."""
        return redact(self.location)


def redact(source: str) -> str:
    """A source fit for messages and records: `https://user:token@host` loses its userinfo."""
    if "://" not in source:
        return source
    try:
        parts = urlsplit(source)
    except ValueError:
        return source
    if "@" not in parts.netloc:
        return source
    userinfo, _, hostport = parts.netloc.rpartition("@")
    # ssh users are not secrets (git@host); https userinfo is usually a token.
    keep = parts.scheme.startswith("ssh") or parts.scheme.endswith("ssh")
    netloc = f"{userinfo.split(':')[0]}@{hostport}" if keep else hostport
    return parts._replace(netloc=netloc).geturl()


def sanitise(component: str) -> str:
    """One folder name: [A-Za-z0-9._-] only, never empty, `.` or `..`."""
    clean = _UNSAFE_CHARS.sub("-", component)
    if clean.strip(".") == "":
        return "-" * len(clean) if clean else NO_OWNER
    return clean


def check_value(value: str, what: str, where: str) -> None:
    """Refuse what git could take as an option or a command, for any user value."""
    if not value:
        raise SourceError(f"[{where}] empty {what}")
    if value.startswith("-"):
        raise SourceError(f"[{where}] refused {what} {value!r}: it begins with '-', which git "
                          "would read as an option")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise SourceError(f"[{where}] refused {what} {value!r}: it holds control characters")
    for option in _SMUGGLED:
        if option in value:
            raise SourceError(f"[{where}] refused {what} {value!r}: it holds the git option "
                              f"{option!r}")


def check_ref(ref: str, where: str) -> None:
    """A ref is any revision `git rev-parse` reads (a sha, a name, `HEAD~1`, `v1.0^{commit}`),
    but never what git could take as an option, and never whitespace or control characters."""
    try:
        check_value(ref, "commit", where)
    except SourceError as exc:
        raise RefError(str(exc)) from None
    if any(ch.isspace() for ch in ref):
        raise RefError(f"[{where}] refused commit {ref!r}: it holds whitespace; give a branch, "
                       "a tag, a sha or a revision like HEAD~1")


_PEELED = re.compile(r"(?:\^\{(?:commit)?\})+\Z")  # `^{commit}`, `^{}`: what pinning does anyway


def remote_ref(ref: str, where: str) -> str:
    """The name or sha to fetch for `ref` from a remote, which is fetched one commit deep: a
    trailing `^{commit}` is dropped (the pin peels to the commit anyway); any other revision
    expression needs the history, so it is refused with what to do."""
    name = _PEELED.sub("", ref)
    if HEX_SHA.fullmatch(name):
        return name
    problem = _ref_format_problem(name)
    if problem:
        raise RefError(f"[{where}] refused commit {ref!r}: {problem}; a remote is fetched one "
                       "commit deep, so give a branch, a tag or a sha (a revision like HEAD~1 "
                       "works in a local clone)")
    return name


def _ref_format_problem(ref: str) -> str | None:
    """Why git's check-ref-format rules refuse `ref`, or None."""
    if any(ch.isspace() for ch in ref):
        return "it holds whitespace"
    bad = set(ref) & set("~^:?*[\\")
    if bad:
        return f"it holds {''.join(sorted(bad))!r}"
    if ".." in ref or "@{" in ref or ref == "@":
        return "it holds '..' or '@{', or is '@'"
    if ref.startswith("/") or ref.endswith("/") or "//" in ref or ref.endswith("."):
        return "it has an empty part or ends with '.'"
    if any(part.startswith(".") or part.endswith(".lock") for part in ref.split("/")):
        return "a part begins with '.' or ends with '.lock'"
    return None


def parse_source(source: str, *, name: str | None = None, web_url: str | None = None) -> SourceSpec:
    """Parse a path, URL, scp-like address or GitHub OWNER/NAME into a SourceSpec.

    A local path is looked at with git (read-only plumbing) to find its repository and its
    network remote (origin, else the only remote); nothing else runs git. `web_url` names the
    repository's web page on a self-hosted forge (its identity and permalinks, GitLab-shaped
    unless its host says otherwise). `name` overrides the folder: "host/owner/name",
    "owner/name" or "name"; a HOST/OWNER/NAME on a known forge is the web URL where neither
    the source nor a remote gives one.
    """
    where = redact(source)
    check_value(source, "source", where)
    if name is not None:
        check_value(name, "name", where)
    spec = _parse(source, where)
    if web_url is not None:
        spec = _with_web_url(spec, web_url, where)
    if name is not None:
        spec = _renamed(spec, name)
    return replace(spec, forge=spec.forge or (forge_of(spec.web_url) if spec.web_url else None))


def _parse(source: str, where: str) -> SourceSpec:
    if _HELPER.match(source):
        raise SourceError(f"[{where}] refused: '<transport>::' addresses run helper programs; "
                          "give an https, ssh, git or file URL or a local path")
    if "://" in source:
        return _from_url(source, where)
    if os.path.lexists(source):  # what exists here is always read here, never fetched
        return _from_path(source, where)
    github = _GITHUB_PREFIX.match(source)
    if github:
        return _from_github(github["rest"], where)
    scp = _SCP.match(source)
    if scp and not source.startswith(("./", "../", "/")):
        return _from_scp(source, scp, where)
    shorthand = _SHORTHAND.match(source)
    if shorthand and not _looks_like_path(source):
        spec = _from_github(source, where)
        return replace(spec, note=(f"[{where}] no such folder here, so it is read as GitHub's "
                                   f"{spec.web_url} (write github:{source} to say so)"))
    raise MissingSourceError(f"[{where}] no such folder: give a repository's path, its URL, "
                             "or github:OWNER/NAME for a repository on GitHub")


def _from_github(shorthand: str, where: str) -> SourceSpec:
    """`github:OWNER/NAME` (or `gh:`, or a bare OWNER/NAME): the repository on GitHub."""
    match = _SHORTHAND.match(shorthand)
    if match is None or not all(part.strip(".") for part in shorthand.split("/")):
        raise SourceError(f"[{where}] not a GitHub repository: write github:OWNER/NAME")
    owner, repo = match["owner"], _strip_git(match["name"])
    return _remote(f"https://{GITHUB}/{owner}/{repo}.git", GITHUB, [owner, repo],
                   f"https://{GITHUB}")


def _looks_like_path(source: str) -> bool:
    """Is a missing OWNER/NAME more likely a mistyped folder than a GitHub repository?

    A GitHub owner is letters, digits and '-' only, so `my_repos/x` or `.cache/x` is a folder;
    a dot-version (`repos/clik-8.1.7`) is an unpacked release; an OWNER that is a folder here
    (`repos/`) says the user meant a path in it.
    """
    owner, _, name = source.partition("/")
    return (source.startswith(("./", "../", "~", "/"))
            or _GITHUB_LOGIN.fullmatch(owner) is None
            or _DOT_VERSION.search(name) is not None
            or os.path.isdir(owner))


def _from_url(url: str, where: str) -> SourceSpec:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SourceError(f"[{where}] not a valid URL: {exc}") from None
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        raise SourceError(f"[{where}] refused scheme {parts.scheme!r}: only https, ssh, git and "
                          "file URLs or local paths are accepted")
    if scheme == "file":
        return _from_file_url(url, parts, where)
    host = parts.hostname or ""
    _check_network_address(url, host, parts.username, where)
    if scheme == "http" and not _is_loopback(host):
        raise SourceError(f"[{where}] refused plain http: it has no integrity check; use https "
                          "(http is accepted only for a server on this machine)")
    keep_port = f":{port}" if port and scheme in ("http", "https") else ""
    web_host = f"[{host}]" if ":" in host else host  # an IPv6 literal
    web_root = f"{'http' if scheme == 'http' else 'https'}://{web_host}{keep_port}"
    # The identity is the decoded path; web_url quotes it again.
    return _remote(url, host, [unquote(part) for part in _path_parts(parts.path, where)],
                   web_root)


def _from_scp(source: str, match: re.Match[str], where: str) -> SourceSpec:
    host = match["host"].lower()
    _check_network_address(source, host, match["user"], where)
    if match["path"].startswith("-"):  # git hands it to the remote shell as an argument
        raise SourceError(f"[{where}] refused: the repository path begins with '-'")
    return _remote(source, host, _path_parts(match["path"], where), f"https://{host}")


def _from_file_url(url: str, parts: SplitResult, where: str) -> SourceSpec:
    name = unquote(_path_parts(parts.path, where)[-1])
    return SourceSpec("remote", url, LOCAL, LOCAL, sanitise(_strip_git(name)), None,
                      by_root=True)



def check_file_url(spec: SourceSpec, where: str) -> None:
    """A `file://` URL of a folder that is not there is refused in one line, a usage error, as a
    path is (git's own answer says less); parsing leaves the machine's files alone."""
    parts = urlsplit(spec.location)
    if parts.scheme == "file" and not parts.netloc and not os.path.lexists(unquote(parts.path)):
        raise MissingSourceError(f"[{where}] no such folder: give the URL of a repository on "
                                 "this machine")

def file_url_git_dir(spec: SourceSpec) -> Path:
    """The git directory a `file://` source names, found as a local path's is: its fetch is
    shallow, so the history that tells it apart is read there (only after the fetch)."""
    folder = Path(unquote(urlsplit(spec.location).path)).resolve()
    return Path(_discover(folder, spec.display)[0])


def _check_network_address(url: str, host: str, user: str | None, where: str) -> None:
    if not host or host.startswith("-") or (user or "").startswith("-"):
        raise SourceError(f"[{where}] refused: the host or user is empty or begins with '-'")
    if any(ch.isspace() for ch in url):
        raise SourceError(f"[{where}] refused: a network URL cannot hold whitespace")


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _path_parts(path: str, where: str) -> list[str]:
    parts = [part for part in path.split("/") if part]
    if not parts:
        raise SourceError(f"[{where}] the URL names no repository: give host/owner/name")
    return parts


def _strip_git(name: str) -> str:
    return name.removesuffix(".git") or name


def _remote(location: str, host: str, parts: list[str], web_root: str) -> SourceSpec:
    """A network source: owner holds every folder but the last (GitLab nested groups)."""
    identity = _identity(host, parts, web_root)
    return SourceSpec("remote", location, identity["host"], identity["owner"], identity["name"],
                      identity["web_url"])


def _identity(host: str, parts: list[str], web_root: str) -> dict[str, str]:
    name = _strip_git(parts[-1])
    owners = parts[:-1]
    web = "/".join(quote(part) for part in [*owners, name])
    return {
        "host": sanitise(host.lower()),
        "owner": "/".join(sanitise(part) for part in owners) or NO_OWNER,
        "name": sanitise(name),
        "web_url": f"{web_root}/{web}",
    }


def _from_path(path: str, where: str) -> SourceSpec:
    """A local repository: its git dir found by git, its identity from a network origin."""
    folder = Path(path).resolve()
    git_dir, top = _discover(folder, where)
    origin = _remote_identity(Path(git_dir))
    if origin is not None:
        return SourceSpec("local", top, origin.host, origin.owner, origin.name, origin.web_url,
                          git_dir)
    base = Path(top).name if Path(top).name != ".git" else Path(top).parent.name
    return SourceSpec("local", top, LOCAL, LOCAL, sanitise(_strip_git(base)), None, git_dir,
                      by_root=True)


def _discover(folder: Path, where: str) -> tuple[str, str]:
    """(git dir, top folder) of the repository at exactly `folder`, never a parent's."""
    if not folder.is_dir():
        raise SourceError(f"[{where}] is not a git repository: give a repository's path or URL")
    # The ceiling stops discovery at `folder`: a subfolder must not crawl its parent repo.
    # Discovery also applies git's safe.directory ownership check before we use --git-dir.
    ceiling = {"GIT_CEILING_DIRECTORIES": str(folder.parent)}
    try:
        out = _text(run_git(None, "rev-parse", "--absolute-git-dir", "--is-inside-work-tree",
                            cwd=folder, env=ceiling)).splitlines()
        top = _text(run_git(None, "rev-parse", "--show-toplevel", cwd=folder,
                            env=ceiling)).strip() if out[1] == "true" else str(folder)
    except GitFailed as exc:
        refused = _refused_as_unsafe(where, exc.lines)
        if refused is not None:
            raise _Refused(refused, exc.lines) from None
        raise SourceError(_not_a_repository(folder, where, exc.reason)) from None
    if Path(top) != folder:
        raise SourceError(_not_a_repository(folder, where, ""))
    return out[0], top


class _Refused(SourceError):
    """git's safe.directory check refused a repository; `git_says` holds git's advice."""

    def __init__(self, message: str, git_says: list[str]) -> None:
        super().__init__(message)
        self.git_says = git_says


def _refused_as_unsafe(where: str, git_says: list[str]) -> str | None:
    """git's safe.directory refusal (the repository is another user's), with git's advice:
    every command git gave, in order (a `file://` fetch and a path's discovery name two)."""
    if not any("dubious ownership" in line for line in git_says):
        return None
    advice = list(dict.fromkeys(line for line in git_says if line.startswith("git config ")))
    commands = " and ".join(f"`{line}`" for line in advice) or (
        "`git config --global --add safe.directory <path>`")
    return (f"[{where}] git refuses to read this repository: it is owned by another user "
            f"(git's safe.directory check); if you trust it, run {commands}")


def refused_as_unsafe(spec: SourceSpec, git_says: list[str]) -> str | None:
    """The message of `_refused_as_unsafe` for a fetch git refused: for a `file://` source,
    with the advice that reading its history here needs too (its work tree's folder), so that
    one round of commands is enough."""
    if not any("dubious ownership" in line for line in git_says):
        return None
    also: list[str] = []
    if spec.file_url:
        try:
            file_url_git_dir(spec)
        except _Refused as refused:
            also = refused.git_says
        except SourceError:
            pass  # not a repository there: the fetch's own words say enough
    return _refused_as_unsafe(spec.display, [*also, *git_says])


def _not_a_repository(folder: Path, where: str, reason: str) -> str:
    """The message, naming the enclosing repository when `folder` is inside one."""
    try:
        top = _text(run_git(None, "rev-parse", "--show-toplevel", cwd=folder)).strip()
    except GitFailed:
        return (f"[{where}] is not a git repository: give a repository's path or URL"
                f"{f' ({reason})' if reason else ''}")
    return f"[{where}] is inside the repository {top}: give its top folder"


def _text(out: bytes) -> str:
    return out.decode("utf-8", "surrogateescape")


def _remote_identity(git_dir: Path) -> SourceSpec | None:
    """The identity of the network remote: `origin`, else the only remote there is."""
    url = _remote_url(git_dir)
    if url is None:
        return None
    if not url or url.startswith(("file:", "/", ".")) or "://" not in url and not _SCP.match(url):
        return None
    try:
        spec = _parse(url, redact(url))
    except SourceError:
        return None  # a strange origin only costs the network identity
    return spec if spec.web_url else None


def _remote_url(git_dir: Path) -> str | None:
    """`remote.origin.url`, else the URL of the only remote; `config` reads, it runs nothing."""
    try:
        out = run_git(git_dir, "config", "--get-regexp", r"^remote\..*\.url$").decode()
    except (GitFailed, UnicodeDecodeError):
        return None  # no remote at all (git exits 1), or a URL that is not text
    urls: dict[str, str] = {}
    for line in out.splitlines():
        key, _, url = line.partition(" ")
        urls.setdefault(key[len("remote."):-len(".url")], url.strip())
    if "origin" in urls:
        return urls["origin"]
    return next(iter(urls.values())) if len(urls) == 1 else None


def _with_web_url(spec: SourceSpec, web_url: str, where: str) -> SourceSpec:
    """A `--web-url`: the https page of the repository, which names its folder too."""
    check_value(web_url, "web URL", where)
    try:
        parts = urlsplit(web_url)
    except ValueError as exc:
        raise SourceError(f"[{where}] --web-url {web_url!r} is not a URL ({exc}); give "
                          "https://HOST/OWNER/NAME") from None
    host = parts.hostname or ""
    if parts.scheme not in ("https", "http") or not host or parts.query or parts.fragment or (
            parts.scheme == "http" and not _is_loopback(host)):
        raise SourceError(f"[{where}] --web-url {web_url!r} is not the https page of a "
                          "repository; give https://HOST/OWNER/NAME")
    paths = [unquote(part) for part in _path_parts(parts.path, where)]
    if len(paths) < 2:
        raise SourceError(f"[{where}] --web-url {web_url!r} names no owner and repository; "
                          "give https://HOST/OWNER/NAME")
    port = f":{parts.port}" if parts.port else ""
    identity = _identity(host, paths, f"{parts.scheme}://{host}{port}")
    return replace(spec, host=identity["host"], owner=identity["owner"], name=identity["name"],
                   web_url=identity["web_url"], by_root=False,
                   forge=forge_of(identity["web_url"]) or GITLAB)


def _renamed(spec: SourceSpec, name: str) -> SourceSpec:
    """Apply a `name=` override: "host/owner/name", "owner/name" or "name".

    The name is the folder. Where neither the source nor a remote gave a web URL, a
    HOST/OWNER/NAME on a known forge (`github.com/o/n`) is the web URL too.
    """
    parts = [part for part in name.split("/") if part]
    if not parts:
        raise SourceError(f"[{spec.display}] empty name {name!r}: give host/owner/name")
    host, owner = spec.host, spec.owner
    if len(parts) >= 3:
        host, owner = sanitise(parts[0]), "/".join(sanitise(p) for p in parts[1:-1])
    elif len(parts) == 2:
        owner = sanitise(parts[0])
    # An explicit name is the folder, as given: the root commit no longer picks the owner.
    renamed = replace(spec, host=host, owner=owner, name=sanitise(parts[-1]), by_root=False)
    web_root = f"https://{host.lower()}"
    if spec.web_url is None and len(parts) >= 3 and forge_of(web_root) is not None:
        return replace(renamed, web_url=_identity(host, parts[1:], web_root)["web_url"])
    return renamed
