"""The two exceptions the query layer raises. Anything else escaping it is a bug."""

from __future__ import annotations


class QueryError(ValueError):
    """A bad argument (an unreadable date, a timeline without project or source...): the message
    says what was wrong and is fit to show to the person or agent who asked."""


class ItemNotFound(QueryError):
    """No item with that id that the caller may read. An item of a source the caller may not read
    raises this too, with the same message: hidden and missing look the same from outside."""

    def __init__(self, item_id: object):
        self.item_id = item_id
        super().__init__(f"no item {item_id}")
