"""Task-specific distillation: targets, the loss, and training a student
classifier on a teacher classifier's predictions."""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.distill import TaskDistillationLoss
from keras_albert.distill import distill_classifier
from keras_albert.distill import distillation_targets
from keras_albert.distill import teacher_logits
from tests.conftest import synthetic_sentences


def numpy_loss(student, teacher, labels, temperature, alpha):
    """The loss written out directly: alpha T^2 KL + (1 - alpha) CE, soft
    term alone (weight 1) on unlabelled rows."""

    def log_softmax(z):
        z = z - z.max(-1, keepdims=True)
        return z - np.log(np.exp(z).sum(-1, keepdims=True))

    t_log = log_softmax(teacher / temperature)
    s_log = log_softmax(student / temperature)
    kl = (np.exp(t_log) * (t_log - s_log)).sum(-1) * temperature**2
    values = []
    for row, label in enumerate(labels):
        if label < 0:
            values.append(kl[row])
        else:
            ce = -log_softmax(student)[row, label]
            values.append(alpha * kl[row] + (1 - alpha) * ce)
    return np.mean(values)


def test_targets_pack_logits_and_one_hot_labels():
    logits = np.arange(6, dtype="float32").reshape(2, 3)
    targets = distillation_targets(logits, labels=[2, -1])
    np.testing.assert_array_equal(targets[:, :3], logits)
    np.testing.assert_array_equal(targets[:, 3:], [[0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(distillation_targets(logits)[:, 3:], np.zeros((2, 3)))


@pytest.mark.parametrize("temperature,alpha", [(1.0, 0.5), (2.0, 0.3), (4.0, 1.0), (1.5, 0.0)])
def test_loss_matches_the_formula(temperature, alpha):
    rng = np.random.default_rng(0)
    student, teacher = rng.normal(size=(2, 5, 4)).astype("float32") * 3
    labels = np.array([0, -1, 3, -1, 2])
    loss = TaskDistillationLoss(temperature, alpha)
    value = float(loss(distillation_targets(teacher, labels), student))
    assert value == pytest.approx(numpy_loss(student, teacher, labels, temperature, alpha), rel=1e-5)


def test_loss_is_zero_when_the_student_matches_and_positive_otherwise():
    rng = np.random.default_rng(1)
    teacher = rng.normal(size=(6, 5)).astype("float32")
    targets = distillation_targets(teacher)
    loss = TaskDistillationLoss(temperature=3.0, alpha=0.5)
    assert float(loss(targets, teacher)) == pytest.approx(0.0, abs=1e-6)
    assert float(loss(targets, teacher[::-1].copy())) > 0.01


def test_loss_config_round_trips():
    loss = TaskDistillationLoss(temperature=3.0, alpha=0.25)
    again = TaskDistillationLoss.from_config(loss.get_config())
    assert (again.temperature, again.alpha) == (3.0, 0.25)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(temperature=0), "temperature"),
        (dict(temperature="2"), "temperature"),
        (dict(alpha=1.5), "alpha"),
        (dict(alpha=-0.1), "alpha"),
    ],
)
def test_bad_loss_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TaskDistillationLoss(**kwargs)


@pytest.mark.parametrize(
    "logits,labels,message",
    [
        (np.zeros((2, 1)), None, "at least 2 classes"),
        (np.zeros(3), None, r"\[examples, classes\]"),
        (np.zeros((2, 3)), [0], "2 integer class ids"),
        (np.zeros((2, 3)), [0.5, 1.0], "integer class ids"),
        (np.zeros((2, 3)), [0, 3], r"Received 3 at index 1"),
        (np.zeros((2, 3)), [-2, 0], r"Received -2 at index 0"),
    ],
)
def test_bad_targets_are_explained(logits, labels, message):
    with pytest.raises(ValueError, match=message):
        distillation_targets(logits, labels)


@pytest.fixture(scope="module")
def classifiers(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)

    def classifier(seed, num_classes=3, **overrides):
        keras.utils.set_random_seed(seed)
        config = dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size(), **overrides)
        return keras_albert.AlbertClassifier(
            keras_albert.AlbertBackbone(**config), num_classes=num_classes,
            preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
        )

    return classifier


@pytest.mark.large
def test_distillation_moves_the_student_towards_the_teacher(classifiers):
    teacher = classifiers(0)
    teacher_weights = [w.copy() for w in teacher.get_weights()]
    student = classifiers(1, hidden_dim=16, intermediate_dim=16, num_layers=1)
    texts = synthetic_sentences(256, seed=3)
    targets = distillation_targets(teacher_logits(teacher, texts))
    loss = TaskDistillationLoss(temperature=1.0, alpha=1.0)
    before = float(loss(targets, student.predict(texts, verbose=0)))
    history = distill_classifier(student, teacher, texts, epochs=4, batch_size=32,
                                 learning_rate=3e-3, temperature=1.0, verbose=0)
    after = float(loss(targets, student.predict(texts, verbose=0)))
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert after < 0.5 * before
    # The teacher is only read.
    for old, new in zip(teacher_weights, teacher.get_weights()):
        np.testing.assert_array_equal(old, new)


@pytest.mark.large
def test_held_out_accuracy_is_logged_each_epoch(classifiers, capsys):
    teacher, student = classifiers(0), classifiers(2)
    texts = synthetic_sentences(64, seed=4)
    history = distill_classifier(student, teacher, texts, labels=[i % 3 for i in range(64)],
                                 epochs=2, batch_size=32, validation_data=(texts[:20], [1] * 20),
                                 verbose=0)
    accuracies = history.history["val_accuracy"]
    assert len(accuracies) == 2 and all(0.0 <= a <= 1.0 for a in accuracies)
    assert "  held-out data: accuracy=" in capsys.readouterr().out


@pytest.mark.large
def test_bad_models_and_settings_are_explained(classifiers):
    teacher, texts = classifiers(0), ["a cat sees a dog."] * 4
    with pytest.raises(ValueError, match=r"student.num_classes=4, teacher.num_classes=3"):
        distill_classifier(classifiers(1, num_classes=4), teacher, texts)
    with pytest.raises(ValueError, match="`teacher` must be an `AlbertClassifier`"):
        distill_classifier(classifiers(1), teacher.backbone, texts)
    with pytest.raises(ValueError, match="epochs"):
        distill_classifier(classifiers(1), teacher, texts, epochs=0)
    with pytest.raises(ValueError, match="`texts` must be a non-empty list of strings"):
        distill_classifier(classifiers(1), teacher, (texts, texts))
    with pytest.raises(ValueError, match="`texts` must be a non-empty list of strings"):
        distill_classifier(classifiers(1), teacher, [])
    with pytest.raises(ValueError, match="`labels` must be 4 integer class ids"):
        distill_classifier(classifiers(1), teacher, texts, labels=[0, 1])
