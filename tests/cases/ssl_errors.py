import ssl
from ssl import SSLEOFError


def npn(protocol):
    raise ssl.SSLError(f"NPN protocol {protocol!r} must be 1 to 255 in length")


def wildcard(dn):
    raise SSLEOFError("too many wildcards in certificate DNS name: {!r}.".format(dn))


def verify(code, host):
    raise ssl.SSLCertVerificationError(code, f"hostname {host} does not match")
