"""Adapters that let RL stacks drive mle-env episodes: thin layers over :class:`mle_env.env.MLEEnv`, one per
stack, each needing only its own optional extra (``pip install 'mle-env[openenv]'``, ``[verifiers]``,
``[trl]``, or ``[rl]`` for all three). The environment itself does not import them.

- :mod:`mle_env.integrations.openenv`: an OpenEnv environment server (``mle-env serve``).
- :mod:`mle_env.integrations.verifiers`: ``load_environment`` for verifiers' environments (a taskset of
  competitions x seeds and a tool-calling harness); ``python -m mle_env.integrations.verifiers`` runs
  verifiers' own ``vf-eval`` on it.
- :mod:`mle_env.integrations.trl`: an ``environment_factory`` class for TRL's ``GRPOTrainer``.
"""
