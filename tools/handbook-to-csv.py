"""The Fraud Detection Handbook's published simulated data as a CSV in the dataset format.

The handbook (Le Borgne et al., "Reproducible Machine Learning for Credit Card Fraud Detection")
publishes its simulated transactions as one pandas pickle per day, in the repository
Fraud-Detection-Handbook/simulated-data-raw (folder data/). This reads every pickle in a folder,
in date order, and writes the columns `npm run eval:handbook -- --data FILE.csv` reads:
transaction_id (T<id>), timestamp (ISO 8601, UTC), amount, customer_id (C<id>),
merchant_id (M<terminal id>: the handbook's terminals play the merchants), label, scenario.

    pip install pandas
    git clone https://github.com/Fraud-Detection-Handbook/simulated-data-raw
    python3 tools/handbook-to-csv.py simulated-data-raw/data handbook.csv

The data stays outside this repository; the output is the same bytes for the same pickles.
"""

import csv
import sys
from pathlib import Path

import pandas as pd


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python3 tools/handbook-to-csv.py PICKLE_FOLDER OUT.csv", file=sys.stderr)
        return 2
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    days = sorted(folder.glob("*.pkl"))
    if not days:
        print(f"handbook-to-csv: no .pkl files in {folder}", file=sys.stderr)
        return 2
    rows = frauds = 0
    with out.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["transaction_id", "timestamp", "amount", "customer_id", "merchant_id", "label", "scenario"])
        for day in days:
            d = pd.read_pickle(day).sort_values(["TX_DATETIME", "TRANSACTION_ID"], kind="stable")
            for r in d.itertuples(index=False):
                w.writerow([
                    f"T{r.TRANSACTION_ID}",
                    r.TX_DATETIME.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    f"{r.TX_AMOUNT:.2f}",
                    f"C{r.CUSTOMER_ID}",
                    f"M{r.TERMINAL_ID}",
                    int(r.TX_FRAUD),
                    int(r.TX_FRAUD_SCENARIO),
                ])
                rows += 1
                frauds += int(r.TX_FRAUD)
    print(f"handbook-to-csv: {rows} transactions ({frauds} fraud) from {len(days)} days into {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
