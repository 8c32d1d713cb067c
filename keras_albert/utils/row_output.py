"""Result rows as JSON lines or as TSV, the two formats `predict` writes."""

import csv
import io
import json


def rows_as_text(rows, output_format, header, cells):
    """`rows` (dicts) as JSON lines (each row whole), or as TSV: `header`,
    then `cells(row)` for each row."""
    if output_format == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(cells(row) for row in rows)
    return buffer.getvalue()
