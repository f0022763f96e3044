from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.geocode_candidate import GeocodeCandidate
    from ..models.geocode_match import GeocodeMatch


T = TypeVar("T", bound="GeocodeResult")


@_attrs_define
class GeocodeResult:
    """
    Attributes:
        query (str): The query as received
        results (list[GeocodeMatch]): Matches, best first
        source (str): Credit to show
        dataset (str): Data release
        ambiguous (bool | Unset): Well-known places far apart fit the name: ask which is meant, or say which you chose
            Default: False.
        candidates (list[GeocodeCandidate] | Unset): When `ambiguous`: the competing places, best first (up to 5)
        warnings (list[str] | Unset): What the results are not
    """

    query: str
    results: list[GeocodeMatch]
    source: str
    dataset: str
    ambiguous: bool | Unset = False
    candidates: list[GeocodeCandidate] | Unset = UNSET
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        source = self.source

        dataset = self.dataset

        ambiguous = self.ambiguous

        candidates: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.candidates, Unset):
            candidates = []
            for candidates_item_data in self.candidates:
                candidates_item = candidates_item_data.to_dict()
                candidates.append(candidates_item)

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "query": query,
                "results": results,
                "source": source,
                "dataset": dataset,
            }
        )
        if ambiguous is not UNSET:
            field_dict["ambiguous"] = ambiguous
        if candidates is not UNSET:
            field_dict["candidates"] = candidates
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.geocode_candidate import GeocodeCandidate
        from ..models.geocode_match import GeocodeMatch

        d = dict(src_dict)
        query = d.pop("query")

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = GeocodeMatch.from_dict(results_item_data)

            results.append(results_item)

        source = d.pop("source")

        dataset = d.pop("dataset")

        ambiguous = d.pop("ambiguous", UNSET)

        _candidates = d.pop("candidates", UNSET)
        candidates: list[GeocodeCandidate] | Unset = UNSET
        if _candidates is not UNSET:
            candidates = []
            for candidates_item_data in _candidates:
                candidates_item = GeocodeCandidate.from_dict(candidates_item_data)

                candidates.append(candidates_item)

        warnings = cast(list[str], d.pop("warnings", UNSET))

        geocode_result = cls(
            query=query,
            results=results,
            source=source,
            dataset=dataset,
            ambiguous=ambiguous,
            candidates=candidates,
            warnings=warnings,
        )

        geocode_result.additional_properties = d
        return geocode_result

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
