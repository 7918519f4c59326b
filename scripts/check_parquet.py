"""Manual interoperability check: a table written as Parquet by an example, read with pyarrow,
equals the CSV the same example writes, value for value and bit for bit.

Not part of the test command (CI has no Python); run it by hand after changing
`mechanism::parquet`:

    python3 -m venv /tmp/pqvenv && /tmp/pqvenv/bin/pip install pyarrow
    cargo run --release --example double_pendulum -- --out out/double_pendulum.parquet
    cargo run --release --example double_pendulum -- --out out/double_pendulum.csv
    /tmp/pqvenv/bin/python scripts/check_parquet.py out/double_pendulum.parquet out/double_pendulum.csv

The CSV holds each number in the shortest form that reads back to the same f64, so Python's
float() of a CSV cell is the value the run computed; the Parquet column must hold exactly it.
Exits with status 1 on any difference.
"""

import csv
import math
import struct
import sys

import pyarrow.parquet as pq


def bits(x):
    """Returns the IEEE 754 bits of the float x."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def main(parquet_path, csv_path):
    table = pq.read_table(parquet_path)
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    metadata = pq.ParquetFile(parquet_path).metadata
    print(f"{parquet_path}: {table.num_rows} rows x {table.num_columns} columns, "
          f"{metadata.num_row_groups} row group(s), created by {metadata.created_by}")
    print(f"{csv_path}: {len(rows)} rows x {len(header)} columns")
    problems = []
    if table.column_names != header:
        problems.append(f"column names differ: {table.column_names} vs {header}")
    types = {str(field.type) for field in table.schema}
    if types != {"double"}:
        problems.append(f"column types {types}, expected double only")
    if table.num_rows != len(rows):
        problems.append(f"{table.num_rows} rows vs {len(rows)}")
    max_difference, different_bits = 0.0, 0
    for j, name in enumerate(header):
        if name not in table.column_names:
            continue
        column = table.column(name).to_pylist()
        for i, (x, cell) in enumerate(zip(column, (row[j] for row in rows))):
            y = float(cell)
            if math.isnan(x) and math.isnan(y):
                continue
            max_difference = max(max_difference, abs(x - y))
            if bits(x) != bits(y):
                different_bits += 1
                if different_bits <= 5:
                    problems.append(f"row {i}, column {name}: {x!r} vs {cell}")
    print(f"max |parquet - csv| = {max_difference!r}; values with different bits: {different_bits}")
    for problem in problems:
        print("DIFFERENCE:", problem)
    if problems or max_difference != 0.0 or different_bits:
        sys.exit(1)
    print("ok: same columns, same rows, same bits")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
