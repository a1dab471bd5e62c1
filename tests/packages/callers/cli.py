from gettext import ngettext

from callers.core import Context, deprecated, reassigned, relay


def parse(ctx: Context, args=("a", "b")):
    if args:
        ctx.fail(
            ngettext(
                "Got unexpected extra argument ({args})",
                "Got unexpected extra arguments ({args})",
                len(args),
            ).format(args=" ".join(map(str, args)))
        )
    Context.fail(ctx, "No such option given here")


def old():
    deprecated("old", message="old() is gone, use new()")


def pass_on(detail="a detail"):
    relay(detail)


def relayed():
    relay("relayed text here")


def stripped():
    reassigned("  text with spaces  ")
