"""Fixtures for pandas frames and scikit-learn pipelines in pk diff and pk
trace (issue 11 item 3): testdata/frames/.

Each object of OBJECTS is written in pickle protocols 2, 4 and 5 and by
joblib, each file by a separate process (as gen_arrays.py). The "changed"
objects differ from their base in one cell (frames) or one coefficient
(the pipeline).

Run with Debian's python3 (numpy 1.24, pandas 1.5, sklearn 1.2, joblib 1.2):

    /usr/bin/python3 testdata/gen/gen_frames.py [OUTDIR]

PK_ONLY=name,name rewrites only those objects (the others are left alone).

The Go tests (pkg/diff/frames_test.go, pkg/trace) read the committed files only.
"""
import os
import subprocess
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "frames")

SCORES = "[0.5, 0.25, 0.125, 0.0625, 0.21, 1.5]"
OBJECTS = {
    # RangeIndex rows; an int block and a float block
    "range": "pd.DataFrame({'x': [1, 2, 3, 4, 5, 6], 'score': %s})" % SCORES,
    "range_changed": "pd.DataFrame({'x': [1, 2, 3, 4, 5, 6], 'score': %s}).assign(score=lambda d: d.score.where(d.index != 4, -5.0))" % SCORES,
    # a RangeIndex from 40, step 2
    "range40": "pd.DataFrame({'score': %s}, index=pd.RangeIndex(40, 52, 2))" % SCORES,
    "range40_changed": "(lambda d: (d.__setitem__('score', d.score.where(d.index != 42, -5.0)), d)[1])(pd.DataFrame({'score': %s}, index=pd.RangeIndex(40, 52, 2)))" % SCORES,
    # str row labels; two float columns in one block
    "labels": "pd.DataFrame({'a': [1.0, 2.0, 3.0], 'score': [0.1, 0.21, 0.3]}, index=['u', 'v', 'w'])",
    "labels_changed": "pd.DataFrame({'a': [1.0, 2.0, 3.0], 'score': [0.1, -5.0, 0.3]}, index=['u', 'v', 'w'])",
    # int row labels
    "ints": "pd.DataFrame({'n': [7, 8, 9]}, index=[10, 20, 30])",
    "ints_changed": "pd.DataFrame({'n': [7, 8, 90]}, index=[10, 20, 30])",
    # pandas Series: int64 row labels, str row labels and str values
    "series": "pd.Series([0.5, 0.25, 0.125, 1.0], index=[40, 41, 42, 43], name='score')",
    "series_changed": "pd.Series([0.5, 0.25, -5.0, 1.0], index=[40, 41, 42, 43], name='score')",
    "series_str": "pd.Series(['x', 'y', 'z'], index=['a', 'b', 'c'])",
    "series_str_changed": "pd.Series(['x', 'Y', 'z'], index=['a', 'b', 'c'])",
    # a str (object) column
    "strcol": "pd.DataFrame({'name': ['a', 'b', 'c'], 'score': [0.5, 0.25, 0.125]}, index=[10, 20, 30])",
    "strcol_changed": "pd.DataFrame({'name': ['a', 'B', 'c'], 'score': [0.5, 0.25, 0.125]}, index=[10, 20, 30])",
    # pandas extension columns (pk diff names their cells: pkg/array's
    # ExtensionAt): a category column (codes + categories; str and int
    # categories, a Series), nullable Int64 and boolean columns (values +
    # mask; a value set to <NA>), a string column (an object ndarray)
    "ext_cat": "pd.DataFrame({'c': pd.Categorical(['a', 'b', 'a'], categories=['a', 'b', 'z']), 'x': [1, 2, 3]}, index=[10, 20, 30])",
    "ext_cat_changed": "pd.DataFrame({'c': pd.Categorical(['a', 'z', 'a'], categories=['a', 'b', 'z']), 'x': [1, 2, 3]}, index=[10, 20, 30])",
    "ext_catint": "pd.DataFrame({'c': pd.Categorical([5, 7, 9, 5], categories=[5, 7, 9])})",
    "ext_catint_changed": "pd.DataFrame({'c': pd.Categorical([5, 7, 5, 5], categories=[5, 7, 9])})",
    "ext_catseries": "pd.Series(pd.Categorical(['lo', 'hi', 'lo']), index=['u', 'v', 'w'])",
    "ext_catseries_changed": "pd.Series(pd.Categorical(['lo', 'hi', 'hi']), index=['u', 'v', 'w'])",
    "ext_int": "pd.DataFrame({'n': pd.array([1, None, 3], dtype='Int64'), 'f': [0.5, 1.5, 2.5]}, index=[10, 20, 30])",
    "ext_int_changed": "pd.DataFrame({'n': pd.array([1, None, 30], dtype='Int64'), 'f': [0.5, 1.5, 2.5]}, index=[10, 20, 30])",
    "ext_bool": "pd.DataFrame({'b': pd.array([True, None, False], dtype='boolean')}, index=['u', 'v', 'w'])",
    "ext_bool_changed": "pd.DataFrame({'b': pd.array([True, None, None], dtype='boolean')}, index=['u', 'v', 'w'])",
    "ext_str": "pd.DataFrame({'s': pd.array(['x', None, 'z'], dtype='string')}, index=[10, 20, 30])",
    "ext_str_changed": "pd.DataFrame({'s': pd.array(['x', None, 'Z'], dtype='string')}, index=[10, 20, 30])",
    # datetime and timedelta columns (pandas 1.5.3: a DatetimeArray or
    # TimedeltaArray block, its datetime64/timedelta64 ndarray 2-D (1, rows);
    # 1-D in a Series): tz-aware (UTC; a named zone; NaT to a value), naive,
    # timedelta (a negative one), a timedelta Series (a value to NaT)
    "ext_tz": "pd.DataFrame({'t': pd.to_datetime(['2021-01-01', '2021-01-02', None]).tz_localize('UTC'), 'x': [1, 2, 3]}, index=[10, 20, 30])",
    "ext_tz_changed": "pd.DataFrame({'t': pd.to_datetime(['2021-01-01', '2021-01-03', None]).tz_localize('UTC'), 'x': [1, 2, 3]}, index=[10, 20, 30])",
    "ext_tzparis": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', None]).tz_localize('Europe/Paris')})",
    "ext_tzparis_changed": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', '2021-07-02']).tz_localize('Europe/Paris')})",
    # the same instants in another time zone (UTC to Europe/Paris)
    "ext_tzconv": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', None]).tz_localize('UTC')})",
    "ext_tzconv_changed": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', None]).tz_localize('UTC').tz_convert('Europe/Paris')})",
    # a naive column made tz-aware (tz_localize: the same int64 counts)
    "ext_aware": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', None])})",
    "ext_aware_changed": "pd.DataFrame({'t': pd.to_datetime(['2021-07-01 12:00', None]).tz_localize('UTC')})",
    "ext_dt": "pd.DataFrame({'t': pd.to_datetime(['2021-01-01', '2021-01-02', None])}, index=['u', 'v', 'w'])",
    "ext_dt_changed": "pd.DataFrame({'t': pd.to_datetime(['2021-01-01', '2021-01-02 03:04:05.5', None])}, index=['u', 'v', 'w'])",
    "ext_td": "pd.DataFrame({'d': pd.to_timedelta(['1 day', '2 hours', None])}, index=[10, 20, 30])",
    "ext_td_changed": "pd.DataFrame({'d': pd.to_timedelta(['1 day', '-3 hours', None])}, index=[10, 20, 30])",
    "ext_tdseries": "pd.Series(pd.to_timedelta(['1ms', '2s']), index=['a', 'b'])",
    "ext_tdseries_changed": "pd.Series(pd.to_timedelta(['1ms', None]), index=['a', 'b'])",
    # numpy datetime64 and timedelta64 blocks (pandas before 1.3; NPBLOCK)
    "ext_npdt": "NPBLOCK(np.array([['2021-01-01', '2021-01-02', 'NaT']], dtype='M8[ns]'), ['t'], [10, 20, 30])",
    "ext_npdt_changed": "NPBLOCK(np.array([['2021-01-01', '2021-01-02 03:04:05.5', 'NaT']], dtype='M8[ns]'), ['t'], [10, 20, 30])",
    "ext_nptd": "NPBLOCK(np.array([[3600 * 10**9, 0]], dtype='m8[ns]'), ['d'], ['u', 'v'])",
    "ext_nptd_changed": "NPBLOCK(np.array([[3600 * 10**9, -1]], dtype='m8[ns]'), ['d'], ['u', 'v'])",
    # a categorical whose categories changed (its codes mean other values):
    # 2 of 3 rows' values change; and one whose categories are reordered,
    # every row's value the same
    "ext_catnew": "pd.DataFrame({'c': pd.Categorical(['a', 'b', 'a'], categories=['a', 'b'])}, index=[10, 20, 30])",
    "ext_catnew_changed": "pd.DataFrame({'c': pd.Categorical(['a', 'z', 'b'], categories=['b', 'a', 'z'])}, index=[10, 20, 30])",
    "ext_catorder": "pd.DataFrame({'c': pd.Categorical(['a', 'b', 'a'], categories=['a', 'b'])})",
    "ext_catorder_changed": "pd.DataFrame({'c': pd.Categorical(['a', 'b', 'a'], categories=['b', 'a'])})",
    # a nullable Int64 column whose value under a set mask changed (pandas
    # shows <NA> on both sides)
    "ext_masked": "pd.DataFrame({'b': pd.arrays.IntegerArray(np.array([1, 2, 3, 5]), np.array([False, False, False, True]))})",
    "ext_masked_changed": "pd.DataFrame({'b': pd.arrays.IntegerArray(np.array([1, 2, 3, 7]), np.array([False, False, False, True]))})",
    # a fitted pipeline
    "pipeline": "PIPE()",
    "pipeline_changed": "(lambda p: (p.steps[1][1].coef_.__setitem__((0, 3), p.steps[1][1].coef_[0, 3] + 1.0), p)[1])(PIPE())",
}

PRELUDE = """
import pickle, sys, numpy as np, joblib
import pandas as pd
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
def NPBLOCK(values, columns, index):
    # a frame of one numpy block, as pandas before 1.3 wrote datetime64 and
    # timedelta64 columns (1.5.3 writes a DatetimeArray; loading this one
    # makes it so again)
    from pandas.core.internals.blocks import NumpyBlock
    from pandas._libs.internals import BlockPlacement
    from pandas.core.internals.managers import BlockManager
    blk = NumpyBlock(values, BlockPlacement(slice(0, len(columns))), 2)
    return pd.DataFrame(BlockManager((blk,), [pd.Index(columns), pd.Index(index)], verify_integrity=False))
def PIPE():
    X = np.arange(40.0).reshape(10, 4) %% 7
    y = np.array([0, 1] * 5)
    return Pipeline([('scale', StandardScaler()), ('clf', LogisticRegression())]).fit(X, y)
obj = %s
form, path = sys.argv[1], sys.argv[2]
if form.startswith('p'):
    with open(path, 'wb') as f:
        pickle.dump(obj, f, protocol=int(form[1:]))
elif form == 'joblib':
    joblib.dump(obj, path)
"""


def run(code, *args):
    subprocess.run([sys.executable, "-c", code] + list(args), check=True, env=dict(os.environ, PYTHONHASHSEED="0"))


def main():
    os.makedirs(OUT, exist_ok=True)
    only = [n for n in os.environ.get("PK_ONLY", "").split(",") if n]  # rewrite these objects only
    if not only:
        for name in os.listdir(OUT):
            if name.endswith((".pkl", ".joblib")):
                os.remove(os.path.join(OUT, name))
    for name, expr in OBJECTS.items():
        if only and name not in only:
            continue
        for form in ("p2", "p4", "p5", "joblib"):
            path = os.path.join(OUT, name + (".joblib" if form == "joblib" else "_" + form + ".pkl"))
            run(PRELUDE % expr, form, path)


if __name__ == "__main__":
    main()
