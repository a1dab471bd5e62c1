class UsageError(Exception):
    def __init__(self, message, ctx=None):
        super().__init__(message)
        self.ctx = ctx
