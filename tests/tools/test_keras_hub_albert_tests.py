"""tools/keras_hub_albert_tests.py: keras-hub's ALBERT tests against ours,
with only the class imports changed, on each Keras backend.

keras-hub's test files live only in its repository, so the runner is tested
here on a small test file in keras-hub's style (its `TestCase`, its import
lines); the figures for keras-hub's own files are recorded in
benchmarks/results/keras_hub_albert_tests.json by the tool itself.
"""

import pytest

import keras_albert
from tests.scripts import load_script

runner = load_script("tools/keras_hub_albert_tests.py")

# A test file as keras-hub writes them: its TestCase, classes imported from
# their keras-hub modules (one on several lines).
KERAS_HUB_STYLE_TEST = '''import os

import numpy as np
import tensorflow as tf

from keras_hub.src.models.albert.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_hub.src.models.albert.albert_tokenizer import AlbertTokenizer
from keras_hub.src.tests.test_case import TestCase


class AlbertStyleTest(TestCase):
    def setUp(self):
        proto = os.path.join(self.get_test_data_dir(), "albert_test_vocab.spm")
        self.preprocessor = AlbertTextClassifierPreprocessor(
            AlbertTokenizer(proto=proto), sequence_length=8)

    def test_classes_are_the_ones_under_test(self):
        assert type(self.preprocessor).__module__.startswith("keras_albert.")

    def test_tokenizer_ids(self):
        self.run_preprocessing_layer_test(
            cls=AlbertTokenizer,
            init_kwargs={"proto": self.preprocessor.tokenizer.proto},
            input_data=["the quick brown fox", "the earth is round"],
            expected_output=[[5, 10, 6, 8], [5, 7, 9, 11]],
        )

    def test_preprocessor_inside_tf_data(self):
        # tf.data graphs run TensorFlow ops whatever the Keras backend.
        ds = tf.data.Dataset.from_tensor_slices(["the quick fox", "the earth"])
        batch = next(iter(ds.batch(2).map(self.preprocessor)))
        assert batch["padding_mask"].dtype == tf.int32
        assert batch["token_ids"].numpy()[0].tolist() == [2, 5, 10, 8, 3, 0, 0, 0]

    def test_fails_on_purpose(self):
        assert np.zeros(1).shape == (2,)
'''


def test_only_the_class_imports_change():
    switched, count = runner.switch_class_imports(KERAS_HUB_STYLE_TEST)
    assert count == 2
    assert "from keras_albert.models import (\n    AlbertTextClassifierPreprocessor,\n)" in switched
    assert "from keras_albert.models import AlbertTokenizer\n" in switched
    assert "from keras_hub.src.tests.test_case import TestCase" in switched
    # Every other line is untouched.
    before = [line for line in KERAS_HUB_STYLE_TEST.splitlines() if "keras_hub.src.models" not in line]
    after = [line for line in switched.splitlines() if "keras_albert.models" not in line]
    assert before == after


def test_the_vocabularies_follow_keras_hub_recipes():
    tokenizer = keras_albert.AlbertTokenizer(proto=runner.albert_test_vocabulary())
    assert tokenizer.vocabulary_size() == 12
    assert tokenizer(["the quick brown fox", "the earth is round"]) == [
        [5, 10, 6, 8], [5, 7, 9, 11]]
    assert tokenizer.id_to_token(4) == "[MASK]"
    with pytest.raises(ValueError, match="not an ALBERT SentencePiece vocabulary"):
        keras_albert.AlbertTokenizer(proto=runner.no_special_token_vocabulary())


def test_a_checkout_without_albert_tests_is_refused(tmp_path):
    with pytest.raises(ValueError, match="keras_hub_source.*git clone"):
        runner.prepare(tmp_path, tmp_path / "scratch")


@pytest.mark.large
def test_runs_each_backend_in_its_own_process_and_reports_each_test(tmp_path):
    checkout = tmp_path / "keras-hub"
    (checkout / runner.TEST_DIR).mkdir(parents=True)
    (checkout / runner.TEST_DIR / "albert_style_test.py").write_text(KERAS_HUB_STYLE_TEST)
    results = runner.run(checkout, ["tensorflow", "torch"])
    assert results["test_files"] == ["albert_style_test.py"]
    for backend in ("tensorflow", "torch"):
        outcome = results["backends"][backend]
        assert outcome["passed"] == 3, (backend, outcome)
        assert outcome["failed"] == 1
        failed = outcome["not_passed"]["albert_style_test.AlbertStyleTest.test_fails_on_purpose"]
        assert failed["outcome"] == "failed" and "(1,) == (2,)" in failed["message"]


def test_a_backend_that_cannot_start_pytest_says_why(tmp_path):
    # A conftest that cannot be imported (as keras-hub's TestCase without
    # grain): pytest writes no report, and the error carries its reason.
    (tmp_path / "conftest.py").write_text("import a_module_that_is_not_installed\n")
    (tmp_path / "some_test.py").write_text("def test_nothing():\n    pass\n")
    with pytest.raises(RuntimeError, match=r"(?s)no results on the tensorflow backend"
                       r".*a_module_that_is_not_installed"):
        runner.run_backend(tmp_path, "tensorflow", timeout=300)
