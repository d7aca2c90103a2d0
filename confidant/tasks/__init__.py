"""The task-system port (where taskflow writes its tasks) and its adapters."""

from confidant.tasks.port import (
    TaskDraft,
    TaskRejectedError,
    TaskSystemError,
    TaskWriter,
    WrittenTask,
)

__all__ = ["TaskDraft", "TaskRejectedError", "TaskSystemError", "TaskWriter", "WrittenTask"]
