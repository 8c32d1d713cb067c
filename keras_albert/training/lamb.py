"""LAMB with the semantics of Google's ALBERT pretraining optimizer.

`keras.optimizers.Lamb` is a different algorithm: it bias-corrects the
moments and applies the trust ratio to every variable. ALBERT was pretrained
with the LAMB of google-research/albert (`lamb_optimizer.py`), which

- keeps no bias correction (`m / (sqrt(v) + epsilon)` on raw moments),
- adds `weight_decay_rate * w` to the update *before* the trust ratio,
- skips both the decay and the trust ratio for LayerNorm and bias variables,
- sets the trust ratio to `||w|| / ||update||` when both norms are positive,
  else 1,
- clips gradients by global norm 1.0 before the step.
"""

import re

import keras
from keras import ops

from keras_albert.utils.validation import check_number_in

DEFAULT_EXCLUDE = ("LayerNorm", "layer_norm", "bias")


def _variable_path(variable):
    path = getattr(variable, "path", None)
    if path is None:
        # A raw `tf.Variable`: "scope/name:0".
        path = re.sub(r":\d+$", "", variable.name)
    return path


def _check_patterns(name, value):
    if value is None:
        return []
    if isinstance(value, str) or not all(isinstance(p, str) for p in value):
        raise ValueError(
            f"`{name}` must be a list of strings (regular expressions searched "
            f"in variable paths). Received: {name}={value!r}"
        )
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(
                f"`{name}` holds an invalid regular expression {pattern!r} "
                f"({error}). Received: {name}={value!r}"
            ) from None
    return list(value)




@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertLamb(keras.optimizers.Optimizer):
    """LAMB as used to pretrain ALBERT (google-research/albert).

    For each variable `w` with gradient `g` (after global-norm clipping):

    ```
    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g**2
    update = m / (sqrt(v) + epsilon)                 # no bias correction
    update += weight_decay_rate * w                  # unless excluded
    ratio = ||w|| / ||update|| if both > 0 else 1    # unless excluded
    w -= learning_rate * ratio * update
    ```

    Exclusions are regular expressions searched (`re.search`) in each
    variable's path, e.g. `"encoder/group_0_inner_0_attention/layer_norm/gamma"`,
    as the original searches TF1 variable names; plain substrings work. The
    defaults exclude LayerNorm parameters and biases (ALBERT's
    `["LayerNorm", "layer_norm", "bias"]`), which also covers this package's
    `layer_norm` layers and the MLM head's `output_bias`.

    Gradient clipping (`global_clipnorm`, default 1.0 as in ALBERT) acts on
    the gradient summed over replicas, so a step under `MirroredStrategy`,
    `MultiWorkerMirroredStrategy` or `TPUStrategy` equals the single-device
    step on the same global batch (Keras would clip each replica's partial
    gradient before the all-reduce).

    Args:
        learning_rate: float or a
            `keras.optimizers.schedules.LearningRateSchedule`, such as
            `keras_albert.training.WarmupLinearDecay`.
        beta_1: float, decay of the first moment. Defaults to 0.9.
        beta_2: float, decay of the second moment. Defaults to 0.999.
        epsilon: float added to `sqrt(v)`. Defaults to 1e-6 (ALBERT's).
        weight_decay_rate: float, decoupled L2 decay folded into the update
            before the trust ratio. Defaults to 0.01.
        exclude_from_weight_decay: list of regular expressions; variables
            whose path matches one get no weight decay.
        exclude_from_layer_adaptation: list of regular expressions; variables
            whose path matches one get no trust ratio (ratio 1). `None`
            (default) uses `exclude_from_weight_decay`, as the original.
        global_clipnorm: float or None, clip gradients to this global norm.
            Defaults to 1.0. Set it to None to use `clipnorm`/`clipvalue`.
        **kwargs: other `keras.optimizers.Optimizer` arguments (`name`,
            `clipnorm`, `clipvalue`, `gradient_accumulation_steps`, ...).
            Keras's own `weight_decay` is rejected: use `weight_decay_rate`.

    Example:
    >>> import keras
    >>> from keras_albert.training import AlbertLamb, WarmupLinearDecay
    >>> schedule = WarmupLinearDecay(
    ...     peak_learning_rate=0.00176, warmup_steps=3125, total_steps=125000)
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    >>> model.compile(optimizer=AlbertLamb(schedule), loss="mse")
    """

    def __init__(
        self,
        learning_rate=0.00176,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        weight_decay_rate=0.01,
        exclude_from_weight_decay=DEFAULT_EXCLUDE,
        exclude_from_layer_adaptation=None,
        global_clipnorm=1.0,
        **kwargs,
    ):
        if kwargs.get("weight_decay") is not None:
            raise ValueError(
                "`weight_decay` (Keras's decoupled decay) is not used by "
                "AlbertLamb, whose decay acts inside the update: pass "
                "`weight_decay_rate` instead. Received: "
                f"weight_decay={kwargs['weight_decay']!r}"
            )
        kwargs.pop("weight_decay", None)
        if isinstance(learning_rate, int) and not isinstance(learning_rate, bool):
            learning_rate = float(learning_rate)
        super().__init__(
            learning_rate=learning_rate, global_clipnorm=global_clipnorm, **kwargs
        )
        self.beta_1 = check_number_in("beta_1", beta_1, 0.0, 1.0)
        self.beta_2 = check_number_in("beta_2", beta_2, 0.0, 1.0)
        self.epsilon = check_number_in("epsilon", epsilon, 0.0, float("inf"))
        self.weight_decay_rate = check_number_in(
            "weight_decay_rate", weight_decay_rate, 0.0, float("inf")
        )
        # Not `self.exclude_from_weight_decay`: that name is a base method.
        self._decay_patterns = _check_patterns(
            "exclude_from_weight_decay", exclude_from_weight_decay
        )
        self._adaptation_patterns = (
            None
            if exclude_from_layer_adaptation is None
            else _check_patterns(
                "exclude_from_layer_adaptation", exclude_from_layer_adaptation
            )
        )
        self._excluded_variable_ids = set()

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Excludes more variables from weight decay (and, by default, from
        layer adaptation); Keras's hook, kept for code written against it.

        Must be called before the optimizer is built.

        Args:
            var_list: variables to exclude.
            var_names: regular expressions searched in variable paths.
        """
        if self.built:
            raise ValueError(
                "`exclude_from_weight_decay()` must be called before the "
                "optimizer is built (before its first step)."
            )
        self._excluded_variable_ids |= {self._var_key(v) for v in var_list or ()}
        self._decay_patterns += _check_patterns("var_names", var_names or [])

    def _matches(self, variable, patterns):
        if self._var_key(variable) in self._excluded_variable_ids:
            return True
        path = _variable_path(variable)
        return any(re.search(pattern, path) for pattern in patterns)

    def uses_weight_decay(self, variable):
        """Whether `variable` gets weight decay (by its path)."""
        if not self.weight_decay_rate:
            return False
        return not self._matches(variable, self._decay_patterns)

    def uses_layer_adaptation(self, variable):
        """Whether `variable` gets the layer-wise trust ratio (by its path)."""
        patterns = self._adaptation_patterns
        if patterns is None:
            patterns = self._decay_patterns
        return not self._matches(variable, patterns)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        # Names of the original checkpoint slots ("<param>/adam_m").
        self._adam_m, self._adam_v = self.add_optimizer_variables(
            var_list, ["adam_m", "adam_v"]
        )
        # Decided once from the Keras paths: inside a distributed update the
        # variable is a per-device component whose name gains "/replica_N".
        self._decay_flags = [self.uses_weight_decay(v) for v in var_list]
        self._adaptation_flags = [self.uses_layer_adaptation(v) for v in var_list]

    def _clip_gradients(self, grads):
        # Clipping is done in `_backend_update_step`, after the all-reduce.
        return grads

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        if keras.config.backend() != "tensorflow":
            # JAX and PyTorch hand over the whole batch's gradients (Keras's
            # `keras.distribution` reduces them inside the compiled step).
            grads = super()._clip_gradients(grads)
            return super()._backend_update_step(grads, trainable_variables, learning_rate)
        return self._tensorflow_update_step(grads, trainable_variables, learning_rate)

    def _tensorflow_update_step(self, grads, trainable_variables, learning_rate):
        # Only on the TensorFlow backend, where TensorFlow is imported.
        import tensorflow as tf

        trainable_variables = [
            v.value if isinstance(v, keras.Variable) else v
            for v in trainable_variables
        ]
        # LAMB needs every row of m and v anyway; the original densifies too.
        grads = [
            tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
            for g in grads
        ]
        grads_and_vars = self._all_reduce_sum_gradients(
            list(zip(grads, trainable_variables))
        )
        grads = super()._clip_gradients([g for g, _ in grads_and_vars])
        grads_and_vars = [(g, v) for g, (_, v) in zip(grads, grads_and_vars)]
        tf.__internal__.distribute.interim.maybe_merge_call(
            self._distributed_tf_update_step,
            self._distribution_strategy,
            grads_and_vars,
            learning_rate,
        )

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m = self._adam_m[index]
        v = self._adam_v[index]
        dtype = variable.dtype
        lr = ops.cast(learning_rate, dtype)
        gradient = ops.cast(gradient, dtype)

        next_m = ops.add(
            ops.multiply(self.beta_1, m), ops.multiply(1.0 - self.beta_1, gradient)
        )
        next_v = ops.add(
            ops.multiply(self.beta_2, v),
            ops.multiply(1.0 - self.beta_2, ops.square(gradient)),
        )
        update = ops.divide(next_m, ops.add(ops.sqrt(next_v), self.epsilon))
        if self._decay_flags[index]:
            update = ops.add(update, ops.multiply(self.weight_decay_rate, variable))
        if self._adaptation_flags[index]:
            w_norm = ops.sqrt(ops.sum(ops.square(variable)))
            u_norm = ops.sqrt(ops.sum(ops.square(update)))
            # Guard the division so neither branch produces inf/NaN.
            safe_u_norm = ops.where(ops.greater(u_norm, 0.0), u_norm, 1.0)
            ratio = ops.where(
                ops.logical_and(ops.greater(w_norm, 0.0), ops.greater(u_norm, 0.0)),
                w_norm / safe_u_norm,
                1.0,
            )
            update = ops.multiply(ratio, update)

        self.assign(m, next_m)
        self.assign(v, next_v)
        self.assign_sub(variable, ops.multiply(lr, update))

    def get_config(self):
        config = super().get_config()
        # Always None here (rejected in __init__); keep the config minimal.
        config.pop("weight_decay", None)
        config.update(
            {
                "beta_1": self.beta_1,
                "beta_2": self.beta_2,
                "epsilon": self.epsilon,
                "weight_decay_rate": self.weight_decay_rate,
                "exclude_from_weight_decay": list(self._decay_patterns),
                "exclude_from_layer_adaptation": (
                    None
                    if self._adaptation_patterns is None
                    else list(self._adaptation_patterns)
                ),
            }
        )
        return config
