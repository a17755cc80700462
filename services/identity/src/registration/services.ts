import type { MetadataDocuments } from './metadata-documents';
import type { Registrations } from './registrations';
import type { RegistrationStore } from './registration-store';

/** The registration feature's services, built once in the composition root. */
export interface RegistrationServices {
  /** RFC 7591 / 7592 under CLIENT_REGISTRATION. */
  registrations: Registrations;
  /** Client ID Metadata Documents: AppDirectory asks them about https client_ids. */
  metadataDocuments: MetadataDocuments;
  store: RegistrationStore;
}
