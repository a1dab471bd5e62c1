import gettext
import inspect
import textwrap
from gettext import ngettext

_ = gettext.gettext
CALLS = {"plural": [{"n": 2}]}


def underscore():
    raise ValueError(_("translated text"))


def gettext_call(x="v"):
    raise ValueError(gettext.gettext("gettext %s") % x)


def plural(n=1):
    raise ValueError(ngettext("%d file", "%d files", n) % n)


def dedented(x="v"):
    raise ValueError(textwrap.dedent(f"""
        first line {x}
          indented
        """))


def cleandoc():
    raise ValueError(inspect.cleandoc("""
        Summary.

            Detail.
        """))


def joined(a="a"):
    raise ValueError(" ".join(["part one", f"part {a}", "end"]))


def stripped():
    raise ValueError("  padded  ".strip())
