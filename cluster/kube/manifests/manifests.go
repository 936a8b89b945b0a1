// Package manifests holds the Kubernetes manifests of inlay's scheduler
// (RBAC and a Deployment) and applies them.
package manifests

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Scheduler is cluster/kube/manifests/inlay-scheduler.yaml.
//
//go:embed inlay-scheduler.yaml
var Scheduler []byte

// Objects decodes the manifests in order.
func Objects() ([]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(Scheduler), 4096)
	var out []any
	for i := 0; ; i++ {
		var raw map[string]any
		err := dec.Decode(&raw)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("inlay-scheduler.yaml: document %d: %w", i+1, err)
		}
		if raw == nil {
			continue
		}
		data, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("inlay-scheduler.yaml: document %d: %w", i+1, err)
		}
		out = append(out, obj)
	}
}

// Apply creates the manifests' objects; with deployment false it leaves
// the Deployment out (a local cluster of KWOK nodes runs no containers).
func Apply(ctx context.Context, cs kubernetes.Interface, deployment bool) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		var err error
		switch x := o.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, x, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, x, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, x, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		case *appsv1.Deployment:
			if deployment {
				_, err = cs.AppsV1().Deployments(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
			}
		default:
			err = fmt.Errorf("inlay-scheduler.yaml: unexpected object %T", o)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// Token returns a bearer token of the inlay-scheduler service account
// (TokenRequest API), for running the scheduler under its own role.
func Token(ctx context.Context, cs kubernetes.Interface) (string, error) {
	exp := int64(24 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts("inlay-system").CreateToken(ctx, "inlay-scheduler",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}
