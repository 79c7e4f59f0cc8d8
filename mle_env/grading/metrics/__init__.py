"""The metric registry: every metric by name, with its direction.

The registry and the helpers every family shares live in :mod:`.registry` (read its docstring for
what a metric receives); the metrics live in one module per family, all imported here, so importing
``mle_env.grading.metrics`` registers every built-in metric. Built on scikit-learn and scipy where they
have the metric, rapidfuzz for edit distances. Competition folders that need a metric the registry lacks
register it from their ``metric.script`` with :func:`register_metric`; new shared metrics belong here.
"""

from mle_env.grading.metrics.classification import (
    accuracy,
    classification_error,
    f1,
    mcc,
    multilabel_micro_f1,
    probabilistic_fbeta,
    quadratic_weighted_kappa,
)
from mle_env.grading.metrics.correlation import mean_columnwise_spearman, pearson
from mle_env.grading.metrics.detection import coco_map, point_in_box_f1, siim_map
from mle_env.grading.metrics.detection3d import lyft_3d_map
from mle_env.grading.metrics.probability import (
    binary_log_loss,
    kl_divergence,
    multiclass_log_loss,
    weighted_multilabel_log_loss,
)
from mle_env.grading.metrics.ranking import kendall_tau_pooled, lwlrap, map_at_k
from mle_env.grading.metrics.registry import (
    LOG_LOSS_EPS,
    METRICS,
    InvalidPrediction,
    Metric,
    MetricFn,
    get_metric,
    register_metric,
    suggest,
)
from mle_env.grading.metrics.regression import (
    grouped_log_mae,
    haversine_p50_p95,
    laplace_log_likelihood,
    mae,
    masked_mcrmse,
    mean_angular_error,
    mean_columnwise_rmsle,
    rmse,
    rmsle,
    smape,
)
from mle_env.grading.metrics.roc import auc, jigsaw_bias_auc, mean_columnwise_auc, weighted_auc_tpr_bands
from mle_env.grading.metrics.segmentation import iou_sweep_precision_rle, pixel_fbeta_rle, rle_dice
from mle_env.grading.metrics.text import (
    levenshtein_distance,
    mean_levenshtein,
    nq_answer_accuracy,
    sequence_edit_rate,
    word_jaccard,
)
from mle_env.grading.metrics.volumes import dice_hausdorff_3d

__all__ = [
    "LOG_LOSS_EPS", "METRICS", "InvalidPrediction", "Metric", "MetricFn", "get_metric", "register_metric", "suggest",
    "accuracy", "auc", "binary_log_loss", "f1", "grouped_log_mae", "haversine_p50_p95", "jigsaw_bias_auc",
    "kendall_tau_pooled", "kl_divergence", "laplace_log_likelihood", "levenshtein_distance", "mae", "map_at_k",
    "masked_mcrmse", "mcc", "mean_angular_error", "mean_columnwise_auc", "mean_columnwise_rmsle",
    "mean_columnwise_spearman",
    "mean_levenshtein", "multiclass_log_loss", "multilabel_micro_f1", "pearson", "point_in_box_f1",
    "siim_map", "coco_map", "lyft_3d_map",
    "quadratic_weighted_kappa", "rmse", "rmsle", "sequence_edit_rate", "smape", "weighted_auc_tpr_bands",
    "word_jaccard",
    "lwlrap", "nq_answer_accuracy",
    "dice_hausdorff_3d",
    "probabilistic_fbeta", "weighted_multilabel_log_loss",
    "iou_sweep_precision_rle", "pixel_fbeta_rle", "rle_dice",
    "classification_error",
]
