"""Stream tasks (internal): ``StreamTask`` with its siblings ``SourceStreamTask``, ``OneInputStreamTask`` and
``TwoInputStreamTask``; the ``TaskMailbox`` and the ``MailboxProcessor`` loop; the operator chain; processing time;
the subtask's checkpoint coordinator. A task's input side is :mod:`strom.runtime.io`."""
