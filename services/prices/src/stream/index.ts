// Stream: the price answer as Server-Sent Events, shared by the subscribers of one query.
export { PriceStream, type PriceStreamOptions } from './price-stream';
export { streamRoute, type StreamRouteDeps } from './stream-route';
