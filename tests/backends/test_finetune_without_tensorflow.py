"""`finetune` on JAX with TensorFlow unimportable: length-bucketed NumPy
batches train the bundled preset for every task; the preset it writes loads
on TensorFlow and scores there as it scored on JAX; the preprocessors'
Python path packs what their TensorFlow path packs; what needs TensorFlow
(the serving export, TFDS) says so."""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines.finetuning_tasks import make_task
from tests.backends.cli_batches import run_batch
from tests.backends.task_packing_worker import pack
from tests.conftest import _WORDS

pytestmark = pytest.mark.large

def _train_file(path):
    rng = np.random.default_rng(0)
    rows = ["text\tlabel"] + [
        f"{' '.join(rng.choice(_WORDS, int(rng.integers(2, 12))))} {animal}\t{label}"
        for animal, label in [("cat", "pet"), ("fish", "wild")] * 40
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def _race_directory(path):
    rng = np.random.default_rng(0)
    path.mkdir()
    for article in range(2):
        options = [list(rng.permutation(["the cat", "a dog", "a fish"])) for _ in range(8)]
        race = {"article": "the cat sleeps in the garden", "questions": ["who sleeps?", "_ sleeps."] * 4,
                "options": options, "answers": ["ABC"[row.index("the cat")] for row in options]}
        (path / f"{article}.txt").write_text(json.dumps(race))
    return path


def _conll_file(path):
    sentences = ["the O\ncat ANIMAL\nsleeps O", "a O\nhorse ANIMAL\nruns O\nquickly O", "Anne PERSON\nwalks O"]
    path.write_text("\n\n".join(sentences * 8) + "\n")
    return path


def _squad_file(path):
    paragraphs = []
    for context, question, answer in [
        ("the cat sleeps in the garden", "which animal sleeps?", "cat"),
        ("a horse runs by the river every morning", "where does the horse run?", "by the river"),
        ("Anne wrote a letter to her sister", "what did Anne write?", "a letter"),
    ]:
        qas = [{"id": f"{question}{i}", "question": question,
                "answers": [{"text": answer, "answer_start": context.index(answer)}]} for i in range(4)]
        paragraphs.append({"context": context, "qas": qas})
    path.write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}))
    return path


def _arguments(train, output, task="classification"):
    return [
        "finetune", "--preset=albert_tiny_en", f"--task={task}", f"--train={train}",
        f"--eval={train}", f"--output={output}", "--epochs=2", "--batch_size=8",
        "--sequence_length=32", "--learning_rate=1e-3",
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every task's finetune, the tfds refusal and the packing, in one JAX
    process (a process start costs seconds): {name: (result, train, output)}."""
    root = tmp_path_factory.mktemp("finetune_jax")
    trains = {
        "classification": _train_file(root / "train.tsv"),
        "multiple_choice": _race_directory(root / "race"),
        "token_classification": _conll_file(root / "train.conll"),
        "squad": _squad_file(root / "squad.json"),
    }
    jobs = {task: {"argv": _arguments(train, root / task, task=task)} for task, train in trains.items()}
    jobs["tfds"] = {"argv": _arguments(trains["classification"], root / "tfds") + ["--tfds=imdb_reviews"]}
    jobs["packed"] = {"pack": str(root / "packed.npz")}
    process, results = run_batch(list(jobs.values()), root / "batch")
    assert process.returncode == 0 and len(results) == len(jobs), process.stderr[-3000:]
    outputs = dict({name: root / name for name in jobs}, packed=root / "packed.npz")
    return {name: (result, trains.get(name), outputs[name]) for name, result in zip(jobs, results)}


def test_classification_trains_and_its_preset_loads_on_tensorflow(runs):
    result, _, output = runs["classification"]
    assert result["returncode"] == 0, result["stderr"][-3000:]
    metrics = json.loads((output / "metrics.json").read_text())
    assert len(metrics["history"]) == 2 and metrics["labels"] == ["pet", "wild"]
    assert "Serving SavedModel: not written (export needs KERAS_BACKEND=tensorflow)" in result["stdout"]
    assert not (output / "serving").exists()
    classifier = keras_albert.AlbertClassifier.from_preset(str(output / "preset"))
    texts = ["the small cat", "a big fish"]
    assert classifier.predict(texts, verbose=0).shape == (2, 2)
    # Learned: the best epoch beats guessing on its own training file.
    assert metrics["best"]["accuracy"] > 0.6


def test_the_python_path_packs_what_the_tensorflow_path_packs(runs):
    result, _, packed = runs["packed"]
    assert result["returncode"] == 0, result["stderr"][-3000:]
    without_tensorflow = np.load(packed)
    on_tensorflow = pack()
    assert set(without_tensorflow.files) == set(on_tensorflow)
    for name, expected in on_tensorflow.items():
        assert without_tensorflow[name].dtype == expected.dtype, name
        np.testing.assert_array_equal(without_tensorflow[name], expected, err_msg=name)


def _score_on_tensorflow(task_name, preset, train, evaluation):
    """The task's scores of the preset on the evaluation file, here (TensorFlow)."""
    task = make_task(task_name, sequence_length=32, batch_size=8)
    task.read(train, "train")
    model = getattr(keras_albert, {
        "multiple_choice": "AlbertMultipleChoice", "token_classification": "AlbertTokenClassifier",
        "squad": "AlbertQuestionAnswerer",
    }[task_name]).from_preset(str(preset))
    return task.score(model, task.read(evaluation, "eval"))


def _trains_and_scores_the_same_on_tensorflow(runs, task):
    result, train, output = runs[task]
    assert result["returncode"] == 0, result["stderr"][-3000:]
    assert "Serving SavedModel: not written (export needs KERAS_BACKEND=tensorflow)" in result["stdout"]
    metrics = json.loads((output / "metrics.json").read_text())
    assert len(metrics["history"]) == 2
    # The kept epoch's model, loaded on TensorFlow, scores the evaluation
    # file as the JAX run scored it (packing and prediction agree).
    scores = _score_on_tensorflow(task, output / "preset", train, train)
    for name, value in scores.items():
        assert value == pytest.approx(metrics["best"][name], abs=1e-6), name
    return metrics


def test_multiple_choice_trains_and_scores_the_same_on_tensorflow(runs):
    metrics = _trains_and_scores_the_same_on_tensorflow(runs, "multiple_choice")
    assert "accuracy" in metrics["best"]


def test_token_classification_trains_and_scores_the_same_on_tensorflow(runs):
    metrics = _trains_and_scores_the_same_on_tensorflow(runs, "token_classification")
    assert metrics["labels"] == ["ANIMAL", "O", "PERSON"]
    # Learned: the best epoch beats labelling every word O (5 of 9 words).
    assert metrics["best"]["accuracy"] > 0.6


def test_squad_trains_and_scores_the_same_on_tensorflow(runs):
    metrics = _trains_and_scores_the_same_on_tensorflow(runs, "squad")
    assert set(metrics["best"]) >= {"f1", "exact_match"}


def test_tfds_is_refused_before_any_work(runs):
    result, _, output = runs["tfds"]
    assert result["returncode"] == 2
    assert "`--tfds` reads with tensorflow-datasets: it needs KERAS_BACKEND=tensorflow (this run: jax)" in result["stderr"]
    assert not output.exists()
