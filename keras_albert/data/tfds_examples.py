"""Text tasks from tensorflow-datasets, read from the user's local copy.

Never downloads (`download=False`): point `data_dir` at a directory where
the dataset was prepared before; a missing dataset is a clear error.
"""

from keras_albert.data.task_files import TextExamples


def read_tfds(name, split, text_keys=("sentence",), label_key="label", data_dir=None):
    """`TextExamples` for one split of a TFDS text-classification dataset.

    Example: `read_tfds("glue/mrpc", "train", ("sentence1", "sentence2"))`.
    Class names come from the dataset's `ClassLabel`; a float label is
    read as regression (label_set None).
    """
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        raise ValueError(
            "Reading TFDS datasets needs tensorflow-datasets: pip install tensorflow-datasets"
        ) from None
    if len(text_keys) not in (1, 2):
        raise ValueError(f"`text_keys` must name 1 or 2 features. Received: {text_keys!r}")
    try:
        builder = tfds.builder(name, data_dir=data_dir)
        dataset = tfds.load(name, split=split, data_dir=data_dir, download=False)
    except Exception as error:  # TFDS raises many kinds for "not prepared".
        raise ValueError(
            f"Cannot read TFDS dataset {name!r} split {split!r} from "
            f"data_dir={data_dir!r} (it is never downloaded here): {error}"
        ) from None
    features = builder.info.features
    missing = [key for key in (*text_keys, label_key) if key not in features]
    if missing:
        raise ValueError(f"TFDS dataset {name!r} has no features {missing}; it has {sorted(features)}.")
    names = getattr(features[label_key], "names", None)
    texts, pairs, labels = [], [], []
    for example in tfds.as_numpy(dataset):
        texts.append(example[text_keys[0]].decode("utf-8"))
        if len(text_keys) == 2:
            pairs.append(example[text_keys[1]].decode("utf-8"))
        label = example[label_key]
        labels.append(names[int(label)] if names else float(label))
    return TextExamples(
        texts=texts,
        text_pairs=pairs if len(text_keys) == 2 else None,
        labels=labels,
        label_set=sorted(names) if names else None,
    )
