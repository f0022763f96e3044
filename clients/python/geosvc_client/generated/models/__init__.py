"""Contains all the data models used in inputs/outputs"""

from .b_box import BBox
from .demographics_args import DemographicsArgs
from .demographics_args_around import DemographicsArgsAround
from .demographics_args_topics_type_0_item import DemographicsArgsTopicsType0Item
from .demographics_args_within import DemographicsArgsWithin
from .demographics_batch_item import DemographicsBatchItem
from .demographics_batch_result import DemographicsBatchResult
from .demographics_result import DemographicsResult
from .demographics_result_level import DemographicsResultLevel
from .error import Error
from .error_error import ErrorError
from .geocode_args import GeocodeArgs
from .geocode_batch_body import GeocodeBatchBody
from .geocode_batch_body_items_item_type_1 import GeocodeBatchBodyItemsItemType1
from .geocode_batch_item import GeocodeBatchItem
from .geocode_batch_result import GeocodeBatchResult
from .geocode_candidate import GeocodeCandidate
from .geocode_candidate_kind import GeocodeCandidateKind
from .geocode_match import GeocodeMatch
from .geocode_match_kind import GeocodeMatchKind
from .geocode_match_type_type_0 import GeocodeMatchTypeType0
from .geocode_result import GeocodeResult
from .get_average_income_batch_body import GetAverageIncomeBatchBody
from .get_average_income_batch_body_items_item_type_1 import (
    GetAverageIncomeBatchBodyItemsItemType1,
)
from .get_demographics_batch_body import GetDemographicsBatchBody
from .get_demographics_batch_body_items_item_type_1 import (
    GetDemographicsBatchBodyItemsItemType1,
)
from .get_demographics_topics_item import GetDemographicsTopicsItem
from .get_population_batch_body import GetPopulationBatchBody
from .get_population_batch_body_items_item_type_1 import (
    GetPopulationBatchBodyItemsItemType1,
)
from .income_args import IncomeArgs
from .income_args_around import IncomeArgsAround
from .income_args_within import IncomeArgsWithin
from .income_batch_item import IncomeBatchItem
from .income_batch_result import IncomeBatchResult
from .income_result import IncomeResult
from .income_result_candidates_item import IncomeResultCandidatesItem
from .income_result_level import IncomeResultLevel
from .income_result_measure import IncomeResultMeasure
from .item_error import ItemError
from .job import Job
from .job_status import JobStatus
from .job_submission import JobSubmission
from .job_submission_items_item import JobSubmissionItemsItem
from .job_submission_tool import JobSubmissionTool
from .lat_lon import LatLon
from .list_jobs_response_200 import ListJobsResponse200
from .measure import Measure
from .measure_unit import MeasureUnit
from .nearby_place import NearbyPlace
from .nearby_place_type_type_0 import NearbyPlaceTypeType0
from .nearest_postal_code import NearestPostalCode
from .population_args import PopulationArgs
from .population_args_around import PopulationArgsAround
from .population_args_within import PopulationArgsWithin
from .population_batch_item import PopulationBatchItem
from .population_batch_result import PopulationBatchResult
from .population_result import PopulationResult
from .population_result_candidates_item import PopulationResultCandidatesItem
from .population_result_level import PopulationResultLevel
from .reverse_geocode_args import ReverseGeocodeArgs
from .reverse_geocode_batch_body import ReverseGeocodeBatchBody
from .reverse_geocode_batch_body_items_item_type_1 import (
    ReverseGeocodeBatchBodyItemsItemType1,
)
from .reverse_geocode_batch_item import ReverseGeocodeBatchItem
from .reverse_geocode_batch_result import ReverseGeocodeBatchResult
from .reverse_geocode_result import ReverseGeocodeResult
from .reverse_geocode_result_kind import ReverseGeocodeResultKind
from .reverse_geocode_result_water_type_0 import ReverseGeocodeResultWaterType0
from .search_nearby_category import SearchNearbyCategory
from .search_nearby_order import SearchNearbyOrder
from .search_nearby_result import SearchNearbyResult
from .search_nearby_result_order import SearchNearbyResultOrder
from .static_map_json import StaticMapJson
from .static_map_json_choropleth_type_0 import StaticMapJsonChoroplethType0
from .static_map_result import StaticMapResult
from .static_map_result_choropleth_type_0 import StaticMapResultChoroplethType0
from .submit_job_tool import SubmitJobTool

__all__ = (
    "BBox",
    "DemographicsArgs",
    "DemographicsArgsAround",
    "DemographicsArgsTopicsType0Item",
    "DemographicsArgsWithin",
    "DemographicsBatchItem",
    "DemographicsBatchResult",
    "DemographicsResult",
    "DemographicsResultLevel",
    "Error",
    "ErrorError",
    "GeocodeArgs",
    "GeocodeBatchBody",
    "GeocodeBatchBodyItemsItemType1",
    "GeocodeBatchItem",
    "GeocodeBatchResult",
    "GeocodeCandidate",
    "GeocodeCandidateKind",
    "GeocodeMatch",
    "GeocodeMatchKind",
    "GeocodeMatchTypeType0",
    "GeocodeResult",
    "GetAverageIncomeBatchBody",
    "GetAverageIncomeBatchBodyItemsItemType1",
    "GetDemographicsBatchBody",
    "GetDemographicsBatchBodyItemsItemType1",
    "GetDemographicsTopicsItem",
    "GetPopulationBatchBody",
    "GetPopulationBatchBodyItemsItemType1",
    "IncomeArgs",
    "IncomeArgsAround",
    "IncomeArgsWithin",
    "IncomeBatchItem",
    "IncomeBatchResult",
    "IncomeResult",
    "IncomeResultCandidatesItem",
    "IncomeResultLevel",
    "IncomeResultMeasure",
    "ItemError",
    "Job",
    "JobStatus",
    "JobSubmission",
    "JobSubmissionItemsItem",
    "JobSubmissionTool",
    "LatLon",
    "ListJobsResponse200",
    "Measure",
    "MeasureUnit",
    "NearbyPlace",
    "NearbyPlaceTypeType0",
    "NearestPostalCode",
    "PopulationArgs",
    "PopulationArgsAround",
    "PopulationArgsWithin",
    "PopulationBatchItem",
    "PopulationBatchResult",
    "PopulationResult",
    "PopulationResultCandidatesItem",
    "PopulationResultLevel",
    "ReverseGeocodeArgs",
    "ReverseGeocodeBatchBody",
    "ReverseGeocodeBatchBodyItemsItemType1",
    "ReverseGeocodeBatchItem",
    "ReverseGeocodeBatchResult",
    "ReverseGeocodeResult",
    "ReverseGeocodeResultKind",
    "ReverseGeocodeResultWaterType0",
    "SearchNearbyCategory",
    "SearchNearbyOrder",
    "SearchNearbyResult",
    "SearchNearbyResultOrder",
    "StaticMapJson",
    "StaticMapJsonChoroplethType0",
    "StaticMapResult",
    "StaticMapResultChoroplethType0",
    "SubmitJobTool",
)
