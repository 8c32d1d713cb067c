"""The bar a pretrained model has to clear: TF-IDF + a linear SVM.

Word 1-2 grams with sublinear term frequency and scikit-learn's
`LinearSVC(C=1)`: the simplest strong baseline for text classification.
scikit-learn is an optional dependency (`pip install keras-albert[benchmarks]`).
"""

import time

import numpy as np

from keras_albert.data.task_metrics import accuracy
from keras_albert.data.task_metrics import f1_macro


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


def tfidf_baseline(train_texts, train_labels, test_texts, test_labels=None):
    """Trains TF-IDF + LinearSVC; returns predictions (and scores given labels).

    Example:
    >>> result = tfidf_baseline(["good film", "bad film"] * 5, [1, 0] * 5,
    ...                         ["a good one", "a bad one"], [1, 0])
    >>> result["accuracy"]
    1.0
    """
    vectorizer_cls, svm_cls = _sklearn()
    started = time.time()
    vectorizer = vectorizer_cls(ngram_range=(1, 2), sublinear_tf=True)
    features = vectorizer.fit_transform(list(train_texts))
    model = svm_cls(C=1.0).fit(features, np.asarray(train_labels))
    predictions = model.predict(vectorizer.transform(list(test_texts)))
    result = {"predictions": predictions, "seconds": round(time.time() - started, 2)}
    if test_labels is not None:
        result.update(classification_scores(test_labels, predictions))
    return result
