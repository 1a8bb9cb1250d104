#!/usr/bin/python3
"""Write pickles of pandas and scikit-learn objects for pk scan's pandas and
sklearn presets (testdata/scan/producers/). Run with Debian's python3
(pandas 1.5.3, scikit-learn 1.2.1, numpy 1.24.2, joblib 1.2.0):

    /usr/bin/python3 testdata/scan/gen_producers.py

Nothing is unpickled. File names: _pd153 pandas, _sk121 scikit-learn,
_p<N> protocol.
"""
import os
import pickle

import joblib
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression, LinearRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.pipeline import Pipeline

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "producers")
for f in os.listdir(OUT):
    os.remove(os.path.join(OUT, f))

rng = np.random.RandomState(0)
X = rng.rand(40, 3)
y = (X[:, 0] > 0.5).astype(int)

pandas_objs = {
    "frame": pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5], "c": ["x", "y", "z"]}),
    "series": pd.Series([1.0, 2.0, 3.0], name="s"),
    "frame_dates": pd.DataFrame({"t": pd.date_range("2020-01-01", periods=3), "d": pd.to_timedelta([1, 2, 3], unit="D")}),
    "categorical": pd.Series(pd.Categorical(["a", "b", "a"])),
    "multiindex": pd.DataFrame({"v": [1, 2]}, index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)])),
    "timestamp": pd.Timestamp("2020-01-02 03:04:05"),
}
for name, obj in pandas_objs.items():
    for proto in (2, 4, 5):
        with open(os.path.join(OUT, f"{name}_pd153_p{proto}.pkl"), "wb") as f:
            pickle.dump(obj, f, protocol=proto)

models = {
    "logreg": LogisticRegression().fit(X, y),
    "linreg": LinearRegression().fit(X, y),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y),
    "forest": RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y),
    "pipeline": Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())]).fit(X, y),
}
for name, obj in models.items():
    for proto in (2, 4, 5):
        with open(os.path.join(OUT, f"{name}_sk121_p{proto}.pkl"), "wb") as f:
            pickle.dump(obj, f, protocol=proto)
    joblib.dump(obj, os.path.join(OUT, f"{name}_sk121.joblib"))
print(len(os.listdir(OUT)), "files in", OUT)
