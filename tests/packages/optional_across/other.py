from optional_across import core


def use(t):
    raise core.leaked(t, detail=f"tracer not in the inputs: {t}")
