"""Ratings: openskill Plackett-Luce with ties, tau 0, resubmission keeps mu."""

from __future__ import annotations

import pytest

from arena.ratings import (
    DEFAULT_MU,
    DEFAULT_SIGMA,
    RESUBMIT_SIGMA,
    Rating,
    display,
    new_version,
    rate_match,
    rate_table,
)


def test_new_rating_displays_zero() -> None:
    assert Rating() == Rating(DEFAULT_MU, DEFAULT_SIGMA)
    assert display(Rating()) == pytest.approx(0.0)
    assert display(Rating(30.0, 2.0)) == pytest.approx(24.0)


def test_winner_gains_loser_drops_everyone_more_certain() -> None:
    before = [Rating() for _ in range(4)]
    after = rate_match(before, [1, 2, 3, 4])
    mus = [r.mu for r in after]
    assert mus == sorted(mus, reverse=True)
    assert mus[0] > DEFAULT_MU > mus[3]
    assert all(r.sigma < DEFAULT_SIGMA for r in after)


def test_tied_seats_get_equal_updates() -> None:
    after = rate_match([Rating() for _ in range(4)], [1, 2, 2, 4])
    assert after[1] == after[2]
    assert after[0].mu > after[1].mu > after[3].mu


def test_order_of_seats_does_not_matter() -> None:
    ratings = [Rating(28, 3), Rating(22, 5), Rating(25, 8)]
    forward = rate_match(ratings, [2, 1, 3])
    backward = rate_match(ratings[::-1], [3, 1, 2])
    for a, b in zip(forward, backward[::-1], strict=True):
        assert a.mu == pytest.approx(b.mu)
        assert a.sigma == pytest.approx(b.sigma)


def test_upset_moves_more_than_expected_result() -> None:
    strong, weak = Rating(35, 2), Rating(15, 2)
    expected = rate_match([strong, weak], [1, 2])
    upset = rate_match([strong, weak], [2, 1])
    assert strong.mu - upset[0].mu > expected[0].mu - strong.mu


def test_sigma_never_grows_with_tau_zero() -> None:
    r = [Rating(), Rating()]
    sigmas = []
    for i in range(50):
        r = rate_match(r, [1 + i % 2, 2 - i % 2])
        sigmas.append(r[0].sigma)
    assert sigmas == sorted(sigmas, reverse=True)


def test_new_version_keeps_mu_and_reopens_sigma() -> None:
    settled = Rating(31.0, 1.2)
    fresh = new_version(settled)
    assert fresh.mu == settled.mu
    assert fresh.sigma == RESUBMIT_SIGMA
    assert new_version(Rating(20.0, 8.0)).sigma == 8.0


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        rate_match([Rating(), Rating()], [1])
    with pytest.raises(ValueError):
        rate_match([Rating()], [1])


def test_rate_table_averages_a_bot_in_two_seats() -> None:
    ratings = {"a": Rating(), "b": Rating()}
    new = rate_table(ratings, ["a", "b", "a"], [1, 2, 3])
    plain = rate_match([Rating()] * 3, [1, 2, 3])
    assert new["a"].mu == pytest.approx((plain[0].mu + plain[2].mu) / 2)
    assert new["b"] == plain[1]
    assert ratings["a"] == Rating()


def test_json_round_trip() -> None:
    r = Rating(27.5, 3.25)
    assert Rating.from_json(r.to_json()) == r
