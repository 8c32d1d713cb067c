"""The bars a pretrained model has to clear: the majority class and
TF-IDF + a linear SVM.

Word n-grams with sublinear term frequency and scikit-learn's `LinearSVC`:
the simplest strong baseline for text classification. `tuned_tfidf_baseline`
picks C and the n-gram range on a carve-out of the training texts, as the
fine-tuned model picks its epoch, so both sides are tuned the same way.
scikit-learn is an optional dependency (`pip install keras-albert[benchmarks]`).
"""

import collections
import time

import numpy as np

from keras_albert.data.task_metrics import accuracy
from keras_albert.data.task_metrics import f1_macro
from keras_albert.data.validation_split import validation_indices

# The grid `tuned_tfidf_baseline` searches: C over two decades around
# scikit-learn's default, word unigrams to trigrams.
TFIDF_C = (0.1, 0.3, 1.0, 3.0, 10.0)
TFIDF_NGRAM_RANGES = ((1, 1), (1, 2), (1, 3))


def _sklearn():
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.svm import LinearSVC
    except ImportError:
        raise ImportError(
            "The TF-IDF baseline needs scikit-learn: "
            "`pip install 'keras-albert[benchmarks]'` (or `pip install scikit-learn`)."
        ) from None
    return TfidfVectorizer, LinearSVC


def classification_scores(labels, predictions):
    """Accuracy and macro-F1 (over the classes in labels or predictions)."""
    return {
        "accuracy": accuracy(predictions, labels),
        "macro_f1": f1_macro(predictions, labels),
    }


def majority_baseline(train_labels, test_labels):
    """Predicts the most frequent training label for every test example.

    Example:
    >>> majority_baseline([0, 1, 1], [1, 0, 1, 1])["accuracy"]
    0.75
    """
    majority = collections.Counter(np.asarray(train_labels).tolist()).most_common(1)[0][0]
    result = classification_scores(test_labels, np.full(len(test_labels), majority))
    result["majority_label"] = majority
    return result


def tfidf_baseline(train_texts, train_labels, test_texts, test_labels=None, C=1.0,
                   ngram_range=(1, 2)):
    """Trains TF-IDF + LinearSVC; returns predictions (and scores given labels).

    Example:
    >>> result = tfidf_baseline(["good film", "bad film"] * 5, [1, 0] * 5,
    ...                         ["a good one", "a bad one"], [1, 0])
    >>> result["accuracy"]
    1.0
    """
    vectorizer_cls, svm_cls = _sklearn()
    started = time.time()
    vectorizer = vectorizer_cls(ngram_range=tuple(ngram_range), sublinear_tf=True)
    features = vectorizer.fit_transform(list(train_texts))
    model = svm_cls(C=C).fit(features, np.asarray(train_labels))
    predictions = model.predict(vectorizer.transform(list(test_texts)))
    result = {"predictions": predictions, "seconds": round(time.time() - started, 2)}
    if test_labels is not None:
        result.update(classification_scores(test_labels, predictions))
    return result


def tuned_tfidf_baseline(train_texts, train_labels, test_texts, test_labels=None,
                         validation_fraction=0.1, seed=0):
    """`tfidf_baseline` with the C and n-gram range (`TFIDF_C` x
    `TFIDF_NGRAM_RANGES`) of the best accuracy on a seeded carve-out of the
    training texts (stratified), then refitted on all of them; the test texts choose
    nothing.

    Example:
    >>> result = tuned_tfidf_baseline(["good film", "bad film"] * 10, [1, 0] * 10,
    ...                               ["a good one", "a bad one"], [1, 0])
    >>> result["accuracy"], result["C"] in TFIDF_C
    (1.0, True)
    """
    texts, labels = list(train_texts), np.asarray(train_labels)
    kept, held = validation_indices(len(texts), validation_fraction, seed, labels=labels)
    started = time.time()
    scores = {}
    for ngram_range in TFIDF_NGRAM_RANGES:
        for c in TFIDF_C:
            fitted = tfidf_baseline([texts[i] for i in kept], labels[kept],
                                    [texts[i] for i in held], labels[held], C=c,
                                    ngram_range=ngram_range)
            scores[(c, ngram_range)] = fitted["accuracy"]
    # Ties go to the simpler setting: fewer n-grams, then the smaller C.
    best_c, best_ngrams = max(scores, key=lambda key: (scores[key], -key[1][1], -key[0]))
    result = tfidf_baseline(texts, labels, test_texts, test_labels, C=best_c,
                            ngram_range=best_ngrams)
    result.update(C=best_c, ngram_range=list(best_ngrams),
                  validation_accuracy=scores[(best_c, best_ngrams)],
                  seconds=round(time.time() - started, 2))
    return result
