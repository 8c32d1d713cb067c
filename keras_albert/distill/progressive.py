"""MobileBERT's progressive knowledge transfer, as a loop over `fit`."""


def progressive_distillation(distiller, dataset, steps_per_stage, final_steps,
                             make_optimizer, callbacks=None, verbose="auto",
                             jit_compile="auto"):
    """Trains `distiller` layer by layer, then the whole student.

    Stage k (one per `layer_map` entry) trains mapped student layer k on its
    feature-map and attention losses with everything below frozen (see
    `Distiller.set_stage`); the last stage trains the whole student on
    every loss, pre-training distillation included. Each stage gets a fresh
    optimizer from `make_optimizer(stage, steps)` (`stage` None for the
    last one).

    Returns a list of `(stage, history dict)`.
    """
    for name, value in (("steps_per_stage", steps_per_stage), ("final_steps", final_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"`{name}` must be an int >= 0. Received: {name}={value!r}")
    plan = [(stage, steps_per_stage) for stage in range(distiller.num_stages)]
    plan.append((None, final_steps))
    histories = []
    for stage, steps in plan:
        if not steps:
            continue
        distiller.set_stage(stage)
        distiller.compile(optimizer=make_optimizer(stage, steps), jit_compile=jit_compile)
        history = distiller.fit(dataset, epochs=1, steps_per_epoch=steps,
                                callbacks=callbacks, verbose=verbose, shuffle=False)
        histories.append((stage, history.history))
    distiller.set_stage(None)
    return histories
