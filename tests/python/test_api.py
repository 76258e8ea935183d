"""The public API: the names and keyword names of the README's "From Python", keyword-only where it says so,
a docstring on every function."""
import inspect

import rematch

SIGNATURES = {
    rematch.ot.sinkhorn: "(C, a=None, b=None, *, eps, max_iter=1000, tol=1e-06, stop='marginal', mask=None, "
                         "domain='log')",
    rematch.ot.partial_sinkhorn: "(C, mass, a=None, b=None, *, eps, dummy='l2rm', mask=None, max_iter=1000, "
                                 "tol=1e-06, stop='potential')",
    rematch.ot.sinkhorn2: "(C, a=None, b=None, *, eps, mask=None, value='linear', max_iter=1000, tol=None, "
                          "stop='marginal', domain='log')",
    rematch.ot.partial_sinkhorn2: "(C, mass, a=None, b=None, *, eps, dummy='l2rm', mask=None, value='linear', "
                                  "max_iter=1000, tol=None, stop='marginal')",
    rematch.eval.recall: "(sims, captions_per_image=5)",
    rematch.eval.mean_average_precision: "(query, gallery, query_labels, gallery_labels)",
}


def test_signatures_are_the_issues():
    for function, signature in SIGNATURES.items():
        assert str(inspect.signature(function)) == signature, function.__qualname__


def test_every_public_function_has_a_docstring():
    for module in (rematch, rematch.ot, rematch.eval):
        assert module.__doc__
    for function in SIGNATURES:
        assert len(function.__doc__) > 200, function.__qualname__
    assert rematch._core.Buffer.__doc__
