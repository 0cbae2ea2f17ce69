"""The benchmark report's statistics (scripts/bench/driver.py): the confidence interval
of a median that tells a ratio near an issue's target from this host's noise. Pure
functions, no server."""

import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "bench"))

import driver  # noqa: E402


def coverage(n, k):
    """The exact coverage of [x(k), x(n+1-k)] for the median of n values."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n


def test_too_few_values_have_no_interval():
    for n in range(0, 5):
        assert driver.median_interval(list(range(n))) is None


def test_interval_is_the_narrowest_with_the_confidence():
    # n=11: [x3, x9] covers 93.5%; [x4, x8] only 77.3%.
    assert driver.median_interval(list(range(1, 12))) == (3, 9)
    for n in range(5, 60):
        values = list(range(1, n + 1))
        low, high = driver.median_interval(values)
        k = low
        assert high == n + 1 - k
        assert coverage(n, k) >= 0.90
        assert k == n // 2 or coverage(n, k + 1) < 0.90


def test_interval_covers_the_true_median_about_as_often_as_it_claims():
    # Samples of 11 from a skewed distribution whose median is known (exponential:
    # ln 2): the interval must hold it in about 93.5% of samples, not fewer than 90%.
    rng = random.Random(7)
    trials = 4000
    held = 0
    for _ in range(trials):
        sample = sorted(rng.expovariate(1.0) for _ in range(11))
        low, high = driver.median_interval(sample)
        held += low <= math.log(2) <= high
    assert held / trials >= 0.91
