# lab_task_times: an aggregate callback for tests/system/ansible.sh. After the PLAY RECAP it
# prints one line per task, "TASK TIME  <seconds>  <task name>", in the order the tasks ran, so
# that the group's log says where a playbook run's time went (each task is a Python start in the
# TCG guest: the group's cost is counted in these). It changes no result.
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'lab_task_times'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._times = []      # [name, start, end]
        self._t0 = time.monotonic()

    def _start(self, name):
        self._end()
        self._times.append([name, time.monotonic(), None])

    def _end(self):
        if self._times and self._times[-1][2] is None:
            self._times[-1][2] = time.monotonic()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start(task.get_name())

    def v2_playbook_on_handler_task_start(self, task):
        self._start('handler: ' + task.get_name())

    def v2_playbook_on_stats(self, stats):
        self._end()
        for name, t0, t1 in self._times:
            self._display.display('TASK TIME %6.2f  %s' % (t1 - t0, name))
        self._display.display('TASK TIME %6.2f  (the whole run)' % (time.monotonic() - self._t0))
