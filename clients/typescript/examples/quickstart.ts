import { GeoService, ServiceError } from "../src/index.js";

const service = new GeoService({
  apiKey: process.env.GEOSVC_API_KEY ?? "",
  baseUrl: process.env.GEOSVC_URL ?? "http://127.0.0.1:8000",
});

const answer = await service.call((api) =>
  api.GET("/v1/geocode", { params: { query: { query: "Austin, TX", limit: 1 } } }),
);
const best = answer.data.results[0];
console.log(`${best.name}: ${best.lat.toFixed(2)}, ${best.lon.toFixed(2)}`);
console.log(`charged ${answer.credits.charged}, state ${answer.credits.state}`);

const population = await service.call((api) =>
  api.GET("/v1/population", { params: { query: { postal_code: "10001" } } }),
);
console.log(`ZIP 10001: ${population.data.population} residents (${population.data.source})`);

// a list of any length goes as batches of 100; an item's error stays in its place
const queries = ["Lyon", "Osaka", "Lima"].map((query) => ({ query }));
for await (const batch of service.callBatches(
  (api, items) => api.POST("/v1/geocode/batch", { body: { items } }),
  queries,
)) {
  console.log(batch.data.results.map((item) => item.result?.results[0]?.countryCode));
}

try {
  await service.call((api) =>
    api.GET("/v1/population", { params: { query: { postal_code: "1234" } } }),
  );
} catch (error) {
  if (!(error instanceof ServiceError)) throw error;
  console.log(error.status, error.code, error.retryable); // not retryable: thrown at once
}
