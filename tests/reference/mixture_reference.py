"""Writes the golden fixtures of tests/train/{beta,gaussian}_mixture_test.cpp into
tests/fixtures/mixture/<case>/<name>.npy.

Run from anywhere:  /usr/bin/python3 tests/reference/mixture_reference.py   (numpy, scikit-learn 1.2)

Beta mixture (docs/methods/l2rm.md §1.3): pomegranate (the rayleizhu fork L2RM needs) no longer builds, so
`PomegranateBetaMixture` below transcribes what L2RM's `BMM_pred` runs -- GeneralMixtureModel.from_samples(
TrueBetaDistribution, 2, X, max_iterations=10, stop_threshold=1e-2) then .fit(X) -- from pomegranate's
kmeans.pyx, gmm.pyx, bayes.pyx and distributions/TrueBetaDistribution.pyx, loop for loop. Sums run in the
order pomegranate's Cython loops run them (np.cumsum is a sequential sum). The k-means++ draw uses NumPy's
RandomState as pomegranate does; the drawn centres are saved so the C++ fit can start from them. Two things
differ from pomegranate on purpose, as in the C++: math.lgamma instead of pomegranate's own lgamma, and the
guards variance >= 1e-12 and alpha, beta >= 1e-3 (pomegranate clamps alpha, beta at 0).

Gaussian mixture: scikit-learn's GaussianMixture(n_components=2, max_iter=10, tol=1e-2, reg_covar=5e-4) is
fitted as usual (random_state=seed) and, to make its KMeans initialisation explicit, refitted from the
labels of KMeans(n_clusters=2, n_init=1, random_state=RandomState(seed)) -- the call GaussianMixture makes --
checking both fits agree before the labels are saved.
"""
import math
import os

import numpy as np
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "mixture")
FLOOR = 10e-4  # BMM_pred's literal: 1e-3


def save(case, **arrays):
    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    for name, value in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), np.asarray(value), allow_pickle=False)


def seqsum(a):
    """Left-to-right sum, as a Cython loop accumulates."""
    return float(np.cumsum(np.asarray(a, dtype=np.float64))[-1])


def pair_lse(x, y):
    """pomegranate utils.pyx pair_lse."""
    if x == math.inf or y == math.inf:
        return math.inf
    if x == -math.inf:
        return y
    if y == -math.inf:
        return x
    if x > y:
        return x + math.log(math.exp(y - x) + 1)
    return y + math.log(math.exp(x - y) + 1)


def safe_log(x):
    """pomegranate utils.pyx _log."""
    return math.log(x) if x > 0 else -math.inf


def normalise(losses):
    """BMM_pred's normalisation, in float64 (the C++ does the same)."""
    x = (losses - losses.min()) / (losses.max() - losses.min())
    x[x >= 1] = 1 - FLOOR
    x[x <= 0] = FLOOR
    return x


def kmeanspp(x, rng):
    """kmeans.pyx initialize_centroids(X, weights=1, k=2, 'kmeans++')."""
    n = len(x)
    weights = np.ones(n) / n
    c0 = x[rng.choice(n, p=weights)]
    min_distance = (x - c0) ** 2 * weights
    c1 = x[rng.choice(n, p=min_distance / min_distance.sum())]
    return np.array([c0, c1])


def assign(x, centres):
    """Kmeans._predict / _summarize: nearest centroid, the first of equal distances."""
    return (np.abs(x - centres[1]) < np.abs(x - centres[0])).astype(np.int64)


class Beta:
    """TrueBetaDistribution with summaries [w, Σwx, Σwx²]."""

    def __init__(self, alpha, beta):
        self.alpha, self.beta = alpha, beta
        self.summaries = [0.0, 0.0, 0.0]

    def log_probability(self, x):
        x = min(max(x, 1e-6), 1 - 1e-6)
        return ((self.alpha - 1) * safe_log(x) + (self.beta - 1) * safe_log(1 - x) + math.lgamma(self.alpha + self.beta)
                - math.lgamma(self.alpha) - math.lgamma(self.beta))

    def summarize(self, x, w):
        self.summaries[0] += seqsum(w)
        self.summaries[1] += seqsum(w * x)
        self.summaries[2] += seqsum(w * x * x)

    def from_summaries(self):
        w, sx, sxx = self.summaries
        if w < 1e-8:
            return
        x_bar = sx / w
        s2 = max(sxx / w - sx ** 2.0 / w ** 2.0, 1e-12)
        alpha = x_bar * ((x_bar * (1 - x_bar)) / s2 - 1)
        beta = alpha * (1 - x_bar) / x_bar
        self.alpha, self.beta = max(alpha, 1e-3), max(beta, 1e-3)
        self.summaries = [0.0, 0.0, 0.0]


class PomegranateBetaMixture:
    def __init__(self, x, centres):
        # from_samples: Kmeans(2, 'kmeans++', n_init=1).fit(X, max_iterations=1) = assign, update, assign.
        y0 = assign(x, centres)
        updated = np.array([seqsum(x[y0 == k]) / (y0 == k).sum() for k in range(2)])
        self.labels = assign(x, updated)
        self.dists = []
        for k in range(2):
            d = Beta(2, 2)  # TrueBetaDistribution.blank()
            d.summarize(x[self.labels == k], np.ones((self.labels == k).sum()))
            d.from_summaries()
            self.dists.append(d)
        fractions = [(self.labels == k).mean() for k in range(2)]
        self.log_weights = [math.log(f / sum(fractions)) for f in fractions]
        self.summaries = [0.0, 0.0]
        self.initial = self.parameters()

    def parameters(self):
        return np.array([[d.alpha, d.beta, math.exp(w)] for d, w in zip(self.dists, self.log_weights)])

    def joint(self, xi):
        return [d.log_probability(xi) + w for d, w in zip(self.dists, self.log_weights)]

    def summarize(self, x):
        """GeneralMixtureModel._summarize: E-step statistics and the total log-likelihood."""
        r = np.empty((2, len(x)))
        totals = np.empty(len(x))
        for i, xi in enumerate(x):
            joint = self.joint(xi)
            total = pair_lse(pair_lse(-math.inf, joint[0]), joint[1])
            r[:, i] = [math.exp(joint[k] - total) for k in range(2)]
            totals[i] = total
        for k in range(2):
            self.summaries[k] += seqsum(r[k])
            self.dists[k].summarize(x, r[k])
        return seqsum(totals)

    def from_summaries(self):
        """BayesModel.from_summaries."""
        if sum(self.summaries) == 0:
            return
        total = self.summaries[0] + self.summaries[1]
        for k in range(2):
            self.dists[k].from_summaries()
            self.log_weights[k] = safe_log(self.summaries[k] / total)
            self.summaries[k] = 0.0

    def fit(self, x, stop_threshold, max_iterations):
        """GeneralMixtureModel.fit; returns (M-steps, hit the iteration limit, last log-likelihood)."""
        iteration, improvement, last = 0, math.inf, None
        while improvement > stop_threshold and iteration < max_iterations + 1:
            self.from_summaries()
            log_probability_sum = self.summarize(x)
            if iteration > 0:
                improvement = log_probability_sum - last
            iteration += 1
            last = log_probability_sum
        self.summaries = [0.0, 0.0]
        for d in self.dists:
            d.summaries = [0.0, 0.0, 0.0]
        return iteration - 1, improvement > stop_threshold, last

    def posterior(self, xi):
        joint = self.joint(xi)
        total = pair_lse(pair_lse(-math.inf, joint[0]), joint[1])
        return np.array([math.exp(j - total) for j in joint])


def bmm_case(case, losses, seed, planted_clean=None):
    x = normalise(losses.astype(np.float64))
    centres = kmeanspp(x, np.random.RandomState(seed))
    model = PomegranateBetaMixture(x, centres)
    first = model.fit(x, 1e-2, 10)
    second = model.fit(x, 0.1, 10000)
    assert not second[1], case + ": the second fit hit the iteration cap"
    clean_component = int(np.argmax(model.posterior(FLOOR)))
    probability = np.array([model.posterior(xi)[clean_component] for xi in x])
    arrays = dict(losses=losses, x=x, centres=centres, initial=model.initial,
                  final=model.parameters(), first_iterations=np.int64(first[0]),
                  second_iterations=np.int64(second[0]), log_likelihood=np.float64(second[2]),
                  clean_component=np.int64(clean_component), clean_probability=probability,
                  clean=(probability > 0.5).astype(np.uint8))
    if planted_clean is not None:
        arrays["planted_clean"] = planted_clean.astype(np.uint8)
    save(case, **arrays)
    print(f"{case}: N={len(x)} centres={centres} EM {first[0]}+{second[0]} M-steps, final {model.parameters().tolist()}"
          f" clean component {clean_component}, {int((probability > 0.5).sum())} clean")


def beta_mixtures():
    # docs/methods/l2rm.md §1.11: 0.7·Beta(1.5, 12) (clean pairs, low loss) + 0.3·Beta(8, 2), as losses on another
    # scale.
    rng = np.random.RandomState(11)
    n = 3000
    planted = rng.uniform(size=n) < 0.7
    b = np.where(planted, rng.beta(1.5, 12, size=n), rng.beta(8, 2, size=n))
    bmm_case("bmm_planted", (0.35 * b + 0.02).astype(np.float32), 5, planted)
    # Heavily overlapping components: a long second fit.
    rng = np.random.RandomState(12)
    n = 800
    b = np.where(rng.uniform(size=n) < 0.5, rng.beta(2, 5, size=n), rng.beta(3, 3, size=n))
    bmm_case("bmm_overlap", b, 7)
    # Few samples with repeated extremes (both clamps, ties at the k-means midpoint possible).
    bmm_case("bmm_small", np.array([0.5, 0.1, 0.1, 0.9, 0.45, 0.2, 0.9, 0.3, 0.12, 0.85]), 3)


def gmm_case(case, values, seed):
    X = values.reshape(-1, 1).astype(np.float64)
    kw = dict(n_components=2, max_iter=10, tol=1e-2, reg_covar=5e-4)
    reference = GaussianMixture(random_state=seed, **kw).fit(X)
    labels = KMeans(n_clusters=2, n_init=1, random_state=np.random.RandomState(seed)).fit(X).labels_
    resp = np.zeros((len(X), 2))
    resp[np.arange(len(X)), labels] = 1
    explicit = GaussianMixture(**kw)
    explicit._initialize_parameters = lambda X_, random_state: explicit._initialize(X_, resp)
    explicit.fit(X)
    for name in ("means_", "covariances_", "weights_", "lower_bound_", "n_iter_", "converged_"):
        assert np.array_equal(getattr(reference, name), getattr(explicit, name)), (case, name)
    proba = explicit.predict_proba(X)
    clean_component = int(np.argmin(explicit.means_[:, 0]))
    save(case, values=values, labels=labels.astype(np.int64), means=explicit.means_[:, 0],
         variances=explicit.covariances_[:, 0, 0], weights=explicit.weights_, proba=proba,
         clean_component=np.int64(clean_component), clean_probability=proba[:, clean_component],
         iterations=np.int64(explicit.n_iter_), converged=np.uint8(explicit.converged_),
         lower_bound=np.float64(explicit.lower_bound_))
    print(f"{case}: N={len(X)} n_iter={explicit.n_iter_} converged={explicit.converged_} "
          f"means={explicit.means_[:, 0]} clean component {clean_component}")


def gaussian_mixtures():
    # DivideMix/NCR style: min-max normalised per-sample losses, clean pairs low.
    rng = np.random.RandomState(21)
    n = 1000
    noisy = rng.uniform(size=n) < 0.3
    losses = np.where(noisy, rng.normal(0.7, 0.15, size=n), np.abs(rng.normal(0.1, 0.06, size=n)))
    gmm_case("gmm_split", (losses - losses.min()) / (losses.max() - losses.min()), 4)
    # A narrow spike inside a wide component: k-means splits left from right, EM is still moving after
    # max_iter = 10 (not converged).
    rng = np.random.RandomState(3)
    n = 600
    values = np.where(rng.uniform(size=n) < 0.5, rng.normal(0, 0.01, n), rng.normal(0, 1, n))
    gmm_case("gmm_unconverged", values, 3)


def main():
    beta_mixtures()
    gaussian_mixtures()


if __name__ == "__main__":
    main()
