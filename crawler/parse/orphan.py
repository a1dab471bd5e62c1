"""Imported first by a fork server that must die with the process that started it
(`forkserver.die_with_parent`): the kernel kills it when that process ends, even mid-import;
one whose parent died before that request took effect ends here.
"""

import os

from crawler.parse.forkserver import PARENT_VARIABLE
from crawler.parse.workers import _end, _signal_on_parent_death

_signal_on_parent_death()
if os.environ.get(PARENT_VARIABLE) != str(os.getppid()):
    _end()
