"""The database's clock: the one clock every host of a deployment shares.

Workers, the site and the database may run on different hosts whose clocks disagree. Every time that is
compared with a time written by another host (a heartbeat judged stale, a claim judged overdue, a queue
judged forgotten) is therefore written and read as the database's time: ``Now()`` inside the UPDATE, or
``database_now()`` read once where a computation needs the value itself. A worker whose own clock is far off
then changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connections
from django.db.models.functions import Now
from django.db.models.sql import Query


def database_now(*, using: str = "default") -> datetime:
    """The database's current time (an aware datetime), from one ``SELECT`` of Django's ``Now()``: the same
    expression, and so the same clock, as a ``Now()`` written in an UPDATE."""
    connection = connections[using]
    query = Query(None)
    expression = Now().resolve_expression(query)
    sql, params = query.get_compiler(connection=connection).compile(expression)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql}", params)
        value = cursor.fetchone()[0]
    for converter in connection.ops.get_db_converters(expression) + expression.get_db_converters(connection):
        value = converter(value, expression, connection)
    return value
