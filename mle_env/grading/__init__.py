"""Grading: the metric registry, the one validation path, Kaggle's medal rules and GradeReport.

Public API: :func:`grade`, :class:`Grader`, :func:`medal_thresholds`, :class:`Thresholds`,
:class:`Medal`, :class:`GradeReport`.
"""

from mle_env.grading.grader import Grader, grade
from mle_env.grading.medals import Medal, Thresholds, medal_thresholds
from mle_env.grading.report import GradeReport

__all__ = ["GradeReport", "Grader", "Medal", "Thresholds", "grade", "medal_thresholds"]
