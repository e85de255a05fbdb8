// An independent check of chainlab's composite ML-DSA certificates: Bouncy Castle (Java), an
// implementation chainlab did not write, verifies every certificate of a chain under its
// issuer's key and reads the leaf's private key file.
//
//   java -cp bcprov.jar:. CompositeCheck CHAIN.pem LEAF.key
//
// Prints one line per certificate ("ok <position> <signature algorithm> <OID>") and one for the
// key ("key <algorithm> matches": Bouncy Castle reads the key file, signs with it, and the
// certificate's key verifies the signature); exits 1 at the first certificate or key that
// does not check, naming it. Run by tests/independent/test_composite_bouncy_castle.py.

import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Security;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.jcajce.CompositePrivateKey;
import org.bouncycastle.jcajce.CompositePublicKey;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

public class CompositeCheck {
    public static void main(String[] args) throws Exception {
        Security.addProvider(new BouncyCastleProvider());
        CertificateFactory cf = CertificateFactory.getInstance("X.509", "BC");
        List<X509Certificate> chain = new ArrayList<>();
        try (InputStream in = new FileInputStream(args[0])) {
            for (java.security.cert.Certificate c : cf.generateCertificates(in)) {
                chain.add((X509Certificate) c);
            }
        }
        for (int i = 0; i < chain.size(); i++) {
            X509Certificate cert = chain.get(i);
            X509Certificate issuer = chain.get(Math.min(i + 1, chain.size() - 1));
            try {
                cert.verify(issuer.getPublicKey(), "BC");
            } catch (Exception e) {
                System.out.println("FAILED " + i + " " + cert.getSigAlgName() + ": " + e);
                System.exit(1);
            }
            System.out.println("ok " + i + " " + cert.getSigAlgName() + " " + cert.getSigAlgOID());
        }
        if (args.length > 1) {
            String pem = Files.readString(Path.of(args[1]));
            String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
            byte[] der = Base64.getDecoder().decode(body);
            String alg = chain.get(0).getPublicKey().getAlgorithm();
            PrivateKey key = KeyFactory.getInstance(alg, "BC").generatePrivate(new PKCS8EncodedKeySpec(der));
            if (!(key instanceof CompositePrivateKey) || !(chain.get(0).getPublicKey() instanceof CompositePublicKey)) {
                System.out.println("key " + alg + " is not composite");
                return;
            }
            // Bouncy Castle signs with the key as it reads it, and the certificate's key
            // verifies that signature: the two are one key pair.
            byte[] message = "chainlab composite key check".getBytes();
            java.security.Signature signer = java.security.Signature.getInstance(alg, "BC");
            signer.initSign(key);
            signer.update(message);
            byte[] signature = signer.sign();
            java.security.Signature verifier = java.security.Signature.getInstance(alg, "BC");
            verifier.initVerify(chain.get(0).getPublicKey());
            verifier.update(message);
            if (!verifier.verify(signature)) {
                System.out.println("FAILED key " + alg + ": its signature does not verify under the certificate's key");
                System.exit(1);
            }
            System.out.println("key " + alg + " matches");
        }
    }
}
