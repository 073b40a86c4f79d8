"""Same-attribute retrieval: faiss over EfficientNet-Lite0 face features.

The indicator is §3.3 of "Fairness Indicators for Systematic Assessments of Visual Feature
Extractors" (Goyal et al., FAccT 2022).

For each of the 100 ``lfw_subset`` faces, its 10 nearest faces by cosine similarity
(itself excluded); Precision@K is the share of neighbours in the same lighting group. A
value far above 0.5 means the embedding sorts faces by lighting, the way the seed measures
whether a backbone encodes gender or skin tone.
"""

from __future__ import annotations

from pytest_fairness import fairness, indicators


@fairness.threshold(max_gap=0.2, at=10)
def test_lighting_retrieval_is_even(fairness_features, faces):
    """Precision@10 of same-lighting neighbours differs by at most 0.2 between the groups."""
    features = fairness_features(faces, normalize=None)
    both = (features.embeddings, faces.frame)
    return indicators.precision_at_k(both, both, k=[10, 5], match="lighting", by="lighting")
