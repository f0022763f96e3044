"""What every geodata provider answers. Arguments arrive validated; a provider raises
`NotFound` when it has nothing, `InvalidArgument` for a value it cannot serve (e.g. a
category it does not know) and `UpstreamUnavailable` when its upstream fails.

Both the embedded and the upstream provider implement it (mypy checks where
`app.geodata.service` calls them); each upstream-capable catalogue entry names one of its
methods (checked when `app.geodata.catalogue` is imported). static_map is the embedded
provider's alone."""

from __future__ import annotations

from typing import Protocol

from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult
from app.geodata.tools.geocode.schemas import GeocodeArgs, GeocodeResult
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeArgs, ReverseGeocodeResult
from app.geodata.tools.search_nearby.schemas import SearchNearbyArgs, SearchNearbyResult


class GeodataProvider(Protocol):
    def get_population(self, args: PopulationArgs) -> PopulationResult: ...

    def get_average_income(self, args: IncomeArgs) -> IncomeResult: ...

    def get_demographics(self, args: DemographicsArgs) -> DemographicsResult: ...

    def geocode(self, args: GeocodeArgs) -> GeocodeResult: ...

    def reverse_geocode(self, args: ReverseGeocodeArgs) -> ReverseGeocodeResult: ...

    def search_nearby(self, args: SearchNearbyArgs) -> SearchNearbyResult: ...
