import Crypto
import Foundation
import HTTPServer
import SwiftASN1
import X509

/// A certificate authority made for one test, and a server certificate it signed for 127.0.0.1
/// and localhost: what a company CA or a development certificate gives a real service.
///
/// ```swift
/// let certificates = try TestCertificates(in: folder)
/// let service = try await TestService.sqlite(in: folder, tls: certificates.server)
/// // a client trusts certificates.caFile
/// ```
public struct TestCertificates: Sendable {
    /// The CA's certificate, as a PEM file (what `--ca-file` takes).
    public let caFile: String
    /// The server's certificate and key.
    public let server: TLSIdentity

    public init(in folder: TemporaryFolder, host: String = "127.0.0.1") throws {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("todosync test CA \(UUID().uuidString.prefix(8))") }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let address = host.split(separator: ".").compactMap { UInt8($0) }
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caName,
            subject: try DistinguishedName { CommonName(host) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([
                    .ipAddress(ASN1OctetString(contentBytes: address[...])), .dnsName("localhost"),
                ])
                try ExtendedKeyUsage([.serverAuth])
                Critical(KeyUsage(digitalSignature: true))
            },
            issuerPrivateKey: .init(caKey))
        caFile = folder.file("ca.pem")
        try ca.serializeAsPEM().pemString.write(toFile: caFile, atomically: true, encoding: .utf8)
        self.server = TLSIdentity(certificate: try server.serializeAsPEM().pemString, key: serverKey.pemRepresentation)
    }
}
