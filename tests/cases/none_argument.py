"""A helper called with a literal None, whose text under `if tok is not None:` reads the
parameter's attributes: with None that branch cannot run, so it is no message of that call."""


class Token:
    line = "x = = 1"


class Parser:
    def parse_err(self, tok, detail):
        msg = f"syntax error: {detail}. "
        if tok is not None:
            msg += f"Parsed '{tok.line}'."
        return ValueError(msg)

    def at_end(self):
        raise self.parse_err(None, "unexpected end")

    def at_token(self, tok=Token()):
        raise self.parse_err(tok, "unexpected token")
