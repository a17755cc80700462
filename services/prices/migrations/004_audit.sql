\include @attest/common/migrations/audit.sql
