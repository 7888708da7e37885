"""`faces-cvae`: the shipped conditional VAE loads through the checkpoint path, takes its conditions,
encodes, judges and gives references, and validate-generator runs on it end to end."""

import numpy as np
import pytest

import generators
from generators.learned.data import FRAMING
from searcher.studies.generator_quality import validate_generator


@pytest.fixture(scope="module")
def gen():
    return generators.load("faces-cvae")


def test_it_is_a_checkpoint_generator_with_a_mixed_space(gen):
    assert [p.name for p in gen.space.params] == ["skin_type", "gender"] and gen.space.latent.dim == 32
    assert gen.has_encoder and gen.has_judge and gen.spec.resolution == 64 and gen.resolution == 128
    batch = gen.generate([{"skin_type": "V-VI", "gender": "feminine", "z3": 1.0}])
    assert batch.images.shape == (1, 128, 128, 3) and batch.truth.loc[0, "skin_type"] == "V-VI"


def test_the_skin_type_condition_darkens_the_face_of_every_code(gen):
    codes = gen.space.sample(8, seed=0)
    centre = [gen.generate([{**c, "skin_type": s} for c in codes]).images[:, 48:80, 48:80].astype(float).mean(axis=(1, 2, 3))
              for s in ("I-II", "III-IV", "V-VI")]
    assert (centre[0] > centre[1] + 10).all() and (centre[1] > centre[2] + 5).all()  # the face, lighter to darker


def test_reference_holds_the_conditions_and_the_portrait_framing_it_is_asked(gen):
    ref = gen.reference({"skin_type": "V-VI", "gender": "masculine"}, 8, seed=1)
    assert ref.images.shape == (8, 128, 128, 3)
    assert (ref.truth["skin_tone"] >= 4.5).all() and (ref.truth["gender_presentation"] <= 0.35).all()
    assert ref.truth["scale"].between(*FRAMING).all() and (ref.truth[["blur", "noise", "occlusion"]] == 0).all().all()
    with pytest.raises(ValueError, match="Unknown condition skin_type='VII'"):
        gen.reference({"skin_type": "VII"}, 2)


def test_encoder_round_trip_keeps_the_conditions_of_real_renders(gen):
    ref = gen.reference({"skin_type": "I-II", "gender": "feminine"}, 16, seed=2)
    rows = gen.encode_params(ref.images)
    assert np.mean([r["skin_type"] == "I-II" for r in rows]) >= 0.75


@pytest.mark.slow
def test_validation_runs_end_to_end_with_references(gen):
    result = validate_generator(gen, n=2, detectors=("haar-face",), descriptor="dlib-verify")
    t = result.table.set_index("group")
    assert len(t) == 6 + 5 + 1
    for col in ("conditioned.gender.rate", "reference_conditioned.skin_type.rate", "detected.haar-face.rate",
                "reference_detected.haar-face.rate", "psnr", "encoder_conditions", "fd", "fd_floor", "fd_blur", "fd_recon"):
        assert col in t.columns, col
    assert t["psnr"].between(5, 60).all()
